"""Where a claim's spec comes from (BEHAVIOUR.md §6.1, §6.4): internal templates shadow
external ones only for entries without a namespace; only ``templateSpec.spec`` is used."""

from __future__ import annotations

from typing import Any

import pytest

from webhook.core.model.meta import ObjectKey
from webhook.core.model.podcliqueset import ResourceSharingSpec
from pydantic import TypeAdapter
from webhook.core.model.podcliqueset import read_podcliqueset
from webhook.core.sharing.desired import InternalTemplate, template_source

SPEC = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}
PCS = read_podcliqueset(
    {
        "metadata": {"name": "p", "namespace": "team-a"},
        "spec": {
            "template": {
                "resourceClaimTemplates": [
                    {"name": "gpu", "templateSpec": {"metadata": {"labels": {"copied": "never"}}, "spec": SPEC}},
                    {"name": "bare", "templateSpec": {}},
                ]
            }
        },
    }
)

CASES: list[tuple[str, dict[str, Any], InternalTemplate | ObjectKey]] = [
    ("internal name, no namespace: the internal spec, without its metadata", {"name": "gpu"}, InternalTemplate("gpu", SPEC)),
    ("internal template without a spec", {"name": "bare"}, InternalTemplate("bare", {})),
    ("internal name in another namespace: external", {"name": "gpu", "namespace": "shared"}, ObjectKey("shared", "gpu")),
    (
        "internal name with the PodCliqueSet's own namespace: still external",
        {"name": "gpu", "namespace": "team-a"},
        ObjectKey("team-a", "gpu"),
    ),
    ("other name, no namespace: the PodCliqueSet's namespace", {"name": "ext"}, ObjectKey("team-a", "ext")),
    ("other name in another namespace", {"name": "ext", "namespace": "shared"}, ObjectKey("shared", "ext")),
]


@pytest.mark.parametrize(("entry", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_template_source(entry: dict[str, Any], expected: InternalTemplate | ObjectKey) -> None:
    assert template_source(PCS, TypeAdapter(ResourceSharingSpec).validate_python({**entry, "scope": "AllReplicas"})) == expected
