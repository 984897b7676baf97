"""Where a cold CREATE's instructions go: each piece of validating Grove's e2e PodCliqueSet when
its spec was never seen (a container image varied, as ``instructions.py``'s cold kind), counted
alone by cachegrind over ``--n`` specs, each piece given what the pieces before it made. Pieces
hold others where the table says so (reading the object reads its spec, and that its templates;
the families are their first names and more), so the rows do not add up to the whole. Needs valgrind
(skipped without it). Run: ``python bench/cold_pieces.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
import orjson
from decisions import VALIDATE, pcs_reviews
from instructions import MADE, _varied, count_kinds
from serving import answered

from webhook.core.admission.request import decode
from webhook.core.model.reader import read_podcliqueset, read_spec, read_templates
from webhook.core.model.wire import SpecWire
from webhook.core.pcs.claimnames import name_families
from webhook.core.pcs.handler import PodCliqueSetValidator
from webhook.core.pcs.rules import validate_create
from webhook.core.pcs.warnings import most_claims, unmatched_filters
from webhook.core.sharing.firstnames import first_names
from webhook.core.sharing.scaling import largest
from webhook.core.sharing.sharednames import apart

_AS_SENT = msgspec.json.Decoder(SpecWire)
"""A spec as the review's decoding takes it (``model.wire``)."""

PIECES = {
    "whole": "the whole answer, a new validator's (the cold kind of `instructions.py`)",
    "validator": "a new validator made",
    "decode": "the review decoded, the spec's declarations included (`admission.request.decode`)",
    "object": "the object read, its spec included (`model.reader.read_podcliqueset`)",
    "spec": "the spec read, its templates included (`model.reader.read_spec`)",
    "templates": "the templates read and checked (`model.reader.read_templates`)",
    "rules": "Grove's rules (`pcs.rules.validate_create`)",
    "families": "the claim-name families (`pcs.claimnames.name_families`)",
    "first-names": "their first names and longest length (`sharing.firstnames.first_names`)",
    "apart": "whether those tell that no two share a name (`sharing.sharednames.apart`)",
    "filters": "the filters matching no pod (`pcs.warnings.unmatched_filters`)",
    "most-claims": "the most claims of an owner (`pcs.warnings.most_claims`)",
}


def workload(piece: str) -> Callable[[int], None]:
    """What one run of ``piece`` does: ``run(n)`` does it for the first ``n`` of ``MADE`` specs."""
    review = pcs_reviews()["CREATE"]
    bodies = [orjson.dumps(_varied(review(k), k)) for k in range(MADE)]
    if piece == "whole":
        return lambda n: _each(lambda body: answered(PodCliqueSetValidator(), VALIDATE, body).content(), bodies[:n])
    if piece == "validator":
        return lambda n: _each(lambda _body: PodCliqueSetValidator(), bodies[:n])
    if piece == "decode":
        return lambda n: _each(lambda body: decode(body, PodCliqueSetValidator.objects), bodies[:n])
    if piece == "object":  # as the webhook hands it over: metadata as its JSON text, the spec decoded
        sent = [PodCliqueSetValidator.objects.decode(body)["request"]["object"] for body in bodies]
        return lambda n: _each(read_podcliqueset, sent[:n])
    return _of_objects(piece, [orjson.loads(body)["request"]["object"] for body in bodies])


def _of_objects(piece: str, objects: list[Any]) -> Callable[[int], None]:
    texts = [_AS_SENT.decode(orjson.dumps(o["spec"])) for o in objects]
    if piece == "spec":
        return lambda n: _each(read_spec, texts[:n])
    if piece == "templates":
        templates = [msgspec.Raw(orjson.dumps(o["spec"]["template"]["resourceClaimTemplates"])) for o in objects]
        return lambda n: _each(read_templates, templates[:n])
    specs = [read_spec(text) for text in texts]
    steps: dict[str, Callable[[Any], Any]] = {
        "rules": validate_create, "families": name_families, "filters": unmatched_filters, "most-claims": most_claims,
        "first-names": lambda spec: first_names(largest(spec)),
    }
    if piece == "apart":
        firsts = [first_names(largest(spec))[0] for spec in specs]
        return lambda n: _each(apart, firsts[:n])
    return lambda n: _each(steps[piece], specs[:n])


def _each(step: Callable[[Any], Any], inputs: list[Any]) -> None:
    for value in inputs:
        step(value)


if __name__ == "__main__":
    count_kinds(__file__, __doc__, PIECES, workload, "spec", "piece of a cold CREATE")
