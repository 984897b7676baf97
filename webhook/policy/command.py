"""``webhook policy``: the ValidatingAdmissionPolicy and its binding, printed for ``kubectl apply``.

The chart embeds the JSON form (``--output json``) and sets its own names on it; a test keeps the
chart's copy equal to what this command prints.
"""

from __future__ import annotations

import json
import sys

import yaml

from webhook.policy.manifest import binding, policy
from webhook.policy.settings import PolicySettings


def documents(settings: PolicySettings) -> str:
    """The policy and its binding, as ``settings.output`` asks."""
    items = [policy(settings.name, settings.failure_policy), binding(settings.name, settings.exclude_namespace)]
    if settings.output == "json":
        return json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=2) + "\n"
    return yaml.safe_dump_all(items, sort_keys=False, width=1 << 20)


def policy_command(settings: PolicySettings) -> int:
    sys.stdout.write(documents(settings))
    return 0
