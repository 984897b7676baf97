"""Who makes a PodCliqueSet's claims: who made a claim, as the managed fields the API server records
say, and the decision the reconciler takes from what the claims seen say (``--claims``)."""

from __future__ import annotations

from typing import Any

import pytest

from webhook.core.sharing.makers import ClaimMaking, Evidence, Maker, Wait, claim_maker, who_makes

GROVE_LABELS = {".": {}, "f:app.kubernetes.io/component": {}, "f:app.kubernetes.io/managed-by": {}, "f:app.kubernetes.io/part-of": {}}
OWNER = {".": {}, 'k:{"uid":"2b1c0d4e-0000-4000-8000-000000000001"}': {}}
SPEC = {"f:devices": {"f:requests": {}}}


def entry(manager: str, fields: dict[str, Any], subresource: str = "") -> dict[str, Any]:
    found = {"manager": manager, "operation": "Update", "apiVersion": "resource.k8s.io/v1", "time": "2026-11-28T16:00:00Z",
             "fieldsType": "FieldsV1", "fieldsV1": fields}
    return {**found, "subresource": subresource} if subresource else found


AS_GROVE = {"f:metadata": {"f:labels": GROVE_LABELS, "f:ownerReferences": OWNER}, "f:spec": SPEC}
ALLOCATED = entry("kube-scheduler", {"f:status": {"f:allocation": {}, "f:reservedFor": {}}}, "status")

CLAIMS = [
    ("made by the reconciler", [entry("grove-sharing-webhook", AS_GROVE)], Maker.RECONCILER),
    ("made by Grove's operator", [entry("grove-operator", AS_GROVE)], Maker.GROVE),
    ("made as Grove makes them, by any other manager", [entry("OpenAPI-Generator", AS_GROVE)], Maker.GROVE),
    ("allocated since: the status entry is not its create", [ALLOCATED, entry("grove-operator", AS_GROVE)], Maker.GROVE),
    ("made by the reconciler, Grove's labels merged in later by its operator",
     [entry("grove-sharing-webhook", AS_GROVE), entry("grove-operator", {"f:metadata": {"f:labels": {"f:extra": {}}}})],
     Maker.RECONCILER),
    ("made by hand without Grove's labels or owner, then adopted by the reconciler",
     [entry("kubectl-create", {"f:spec": SPEC}),
      entry("grove-sharing-webhook", {"f:metadata": {"f:labels": GROVE_LABELS, "f:ownerReferences": OWNER}})],
     None),
    ("made by hand with Grove's labels but no owner", [entry("kubectl-create", {"f:metadata": {"f:labels": GROVE_LABELS}, "f:spec": SPEC})], None),
    ("made as Grove makes them with an empty spec: the first entry is its create",
     [entry("grove-operator", {"f:metadata": {"f:labels": GROVE_LABELS, "f:ownerReferences": OWNER}})], Maker.GROVE),
    ("no managed fields", [], None),
    ("managed fields of another shape", [{"manager": "grove-operator", "fieldsType": "FieldsV2"}], None),
]


@pytest.mark.parametrize(("managed", "maker"), [c[1:] for c in CLAIMS], ids=[c[0] for c in CLAIMS])
def test_who_made_a_claim(managed: list[dict[str, Any]], maker: Maker | None) -> None:
    assert claim_maker({"name": "rs-test-all-int-tpl5", "managedFields": managed}) is maker


NOTHING: frozenset[Maker] = frozenset()
GROVE, RECONCILER, BOTH = frozenset({Maker.GROVE}), frozenset({Maker.RECONCILER}), frozenset(Maker)

DECISIONS: list[tuple[str, ClaimMaking, frozenset[Maker], frozenset[Maker], float, Maker | Wait]] = [
    # name, --claims, made (of the PodCliqueSet), in its namespace, seconds waited, decision
    ("always: the reconciler, beside Grove's claims too", "always", GROVE, GROVE, 0.0, Maker.RECONCILER),
    ("never: never the reconciler", "never", RECONCILER, RECONCILER, 60.0, Maker.GROVE),
    ("auto: Grove's operator made one of its claims", "auto", GROVE, BOTH, 0.0, Maker.GROVE),
    ("auto: a race lost once decides for Grove's operator", "auto", BOTH, BOTH, 60.0, Maker.GROVE),
    ("auto: the reconciler made its claims", "auto", RECONCILER, BOTH, 0.0, Maker.RECONCILER),
    ("auto: none yet, only the reconciler made claims in its namespace", "auto", NOTHING, RECONCILER, 0.0, Maker.RECONCILER),
    ("auto: none yet, Grove's operator made claims in its namespace", "auto", NOTHING, BOTH, 0.5, Wait(1.5)),
    ("auto: none yet, none in its namespace", "auto", NOTHING, NOTHING, 0.0, Wait(2.0)),
    ("auto: none within the grace period", "auto", NOTHING, GROVE, 2.0, Maker.RECONCILER),
]


@pytest.mark.parametrize(("setting", "made", "namespace", "waited", "decision"), [d[1:] for d in DECISIONS], ids=[d[0] for d in DECISIONS])
def test_who_makes_a_podcliquesets_claims(setting: ClaimMaking, made: frozenset[Maker], namespace: frozenset[Maker],
                                          waited: float, decision: Maker | Wait) -> None:
    assert who_makes(setting, Evidence(made, namespace, waited), grace=2.0) == decision
