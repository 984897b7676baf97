"""The random PodCliqueSets the policy and the webhook both decide: the generators of the fuzz and
property tests (``fuzz.strategies.mutated`` and ``with_device_values`` over the examples,
``core.sharing.specs.random_spec``), drawn once with the fuzz tests' fixed seed.

``mutated`` is given the members the rules read (templates, the three levels of sharing, scaling
groups) and keeps JSON types, so most of what it draws passes Grove's CRD schema and reaches the
policy; the rest of the example (pod specs, roles) is put back around what it drew.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from fuzz.answers import FUZZ
from fuzz.strategies import EXAMPLES, PCS_EXAMPLES, mutated, with_device_values
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from cluster.decisions import Case
from core.podcliquesets import workload
from core.sharing.specs import random_spec

Obj = dict[str, Any]
READ = ("resourceClaimTemplates", "resourceSharing", "podCliqueScalingGroups")
CREATES = [name for name in PCS_EXAMPLES if name.startswith("pcs-create-")]
UPDATES = [name for name in PCS_EXAMPLES if name.startswith("pcs-update-")]
DEVICES = ["pcs-create-valid.json", "pcs-update-replicas-allowed.json", "pcs-update-u1-templates-immutable.json"]
"""The examples ``with_device_values`` fuzzes (those with a device request)."""


def request(example: str, member: str = "object") -> Obj:
    found: Obj = copy.deepcopy(EXAMPLES[example]["request"][member])
    return found


def read_members(obj: Obj) -> Obj:
    """The members of the template the rules read, each clique as its name and sharing."""
    template = obj["spec"]["template"]
    members = {key: template[key] for key in READ if key in template}
    members["cliques"] = [{k: c[k] for k in ("name", "resourceSharing") if k in c} for c in template["cliques"]]
    return copy.deepcopy(members)


def around(obj: Obj, members: Any) -> Obj:
    """``obj`` with its template's read members replaced by ``members``; each clique gets the rest of
    the example's clique at its index (the last one past the end)."""
    obj = copy.deepcopy(obj)
    spec = obj["spec"]
    if not isinstance(members, dict):
        spec["template"] = members
        return obj
    originals = spec["template"]["cliques"]
    kept = {k: v for k, v in spec["template"].items() if k not in (*READ, "cliques")}
    spec["template"] = {**kept, **members}
    cliques = members.get("cliques")
    if isinstance(cliques, list):
        spec["template"]["cliques"] = [
            {**_rest(originals[min(i, len(originals) - 1)]), **clique} if isinstance(clique, dict) else clique
            for i, clique in enumerate(cliques)
        ]
    return obj


def _rest(clique: Obj) -> Obj:
    return {k: v for k, v in clique.items() if k not in ("name", "resourceSharing")}


def _mutations(example: str) -> st.SearchStrategy[Obj]:
    base = request(example)
    return mutated(read_members(base), max_changes=2, depths=(64, 300), keep_types=True).map(lambda m: around(base, m))


def with_random_sharing(seed: int) -> Obj:
    """The workload with the cliques, scaling groups and PodCliqueSet list of ``random_spec(seed)``."""
    spec = random_spec(seed)
    pcs = workload()
    template = pcs["spec"]["template"]
    clique = template["cliques"][0]
    template["resourceSharing"] = spec["spec"]["template"]["resourceSharing"]
    template["podCliqueScalingGroups"] = spec["spec"]["template"]["podCliqueScalingGroups"]
    template["cliques"] = [
        {**copy.deepcopy(clique), "name": c["name"], "resourceSharing": c["resourceSharing"],
         "spec": {**copy.deepcopy(clique["spec"]), "roleName": c["name"], "replicas": max(c["spec"]["replicas"], 1)}}
        for c in spec["spec"]["template"]["cliques"]
    ]
    return pcs


def drawn(strategy: st.SearchStrategy[Any], count: int) -> list[Any]:
    """``count`` values of ``strategy``, the same on every run (no shrinking: nothing fails here)."""
    found: list[Any] = []

    @settings(FUZZ, max_examples=count, phases=[Phase.generate])
    @given(strategy)
    def collect(value: Any) -> None:
        found.append(value)

    collect()
    return found


def cases(olds: dict[str, str], counts: dict[str, int]) -> list[Case]:
    """Random CREATEs and UPDATEs, ``counts`` of each kind; ``olds``: the stored object each update
    example's UPDATEs start from."""
    kinds: dict[str, Callable[[int], list[Case]]] = {
        "created": lambda n: [
            Case(f"mutated {e}", o) for e, o in drawn(st.sampled_from(CREATES).flatmap(lambda e: _mutations(e).map(lambda o: (e, o))), n)
        ],
        "updated": lambda n: [
            Case(f"mutated {e}", o, olds[e]) for e, o in drawn(st.sampled_from(UPDATES).flatmap(lambda e: _mutations(e).map(lambda o: (e, o))), n)
        ],
        "devices": lambda n: [
            Case(f"device values of {e}", d["request"]["object"], olds.get(e))
            for e, d in drawn(st.sampled_from(DEVICES).flatmap(lambda e: with_device_values(EXAMPLES[e]).map(lambda d: (e, d))), n)
        ],
        "random": lambda n: [Case(f"random_spec({seed})", with_random_sharing(seed)) for seed in range(n)],
    }
    found = [case for kind, count in counts.items() for case in kinds[kind](count)]
    for n, case in enumerate(found):
        case.obj = {**case.obj, "metadata": {**case.obj["metadata"], "name": f"random-{n}"}}
    return found
