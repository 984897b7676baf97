"""``webhook claims FILE...``: which ResourceClaims a PodCliqueSet makes and which claims each pod gets.

Reads PodCliqueSet manifests (and, when given, their PodCliqueScalingGroups and PodCliques for the
replica counts they have now; otherwise the counts Grove starts with) and prints every claim that
must exist and every pod's claims, computed by the functions the webhooks and the reconciler use
(``claims.listing``). Warnings and denials are the validating webhook's (with ``--strict``, those of
``serve --strict``), on stderr and in the JSON or YAML document.

Exit codes: 0; 1 when the validating webhook would deny a PodCliqueSet (everything is printed all
the same); 2 with one line for unusable input (a file that cannot be read or parsed, no
PodCliqueSet, a child of none of them, more than ``--max-items`` to list).
"""

from __future__ import annotations

import sys

from webhook.claims import inputs, render
from webhook.claims.listing import Listing, check_size, listing
from webhook.claims.settings import ClaimsSettings

DENIED = 1


def claims(settings: ClaimsSettings) -> int:
    workloads = inputs.read(settings.files)
    used = 0
    for workload in workloads:
        used += check_size(workload, used, settings.max_items)
    listings: list[Listing] = [listing(workload, settings.max_claims_per_owner, settings.strict) for workload in workloads]
    if settings.output == "json":
        sys.stdout.buffer.write(render.as_json(listings))
    elif settings.output == "yaml":
        sys.stdout.write(render.as_yaml(listings))
    else:
        sys.stdout.write(render.as_table(listings))
    sys.stdout.flush()
    for line in render.diagnostics(listings):
        print(line, file=sys.stderr)
    return DENIED if any(item.denial for item in listings) else 0
