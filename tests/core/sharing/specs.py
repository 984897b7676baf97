"""Random PodCliqueSet specs whose claim names collide, for the property tests of claim names
(``test_patterns``) and for the policy's agreement with the webhook on a real API server."""

from __future__ import annotations

import random
from typing import Any

TOKENS = ["a", "0", "1", "10", "all", "x"]
SCOPES = ["AllReplicas", "PerReplica"]


def _name(rng: random.Random, parts: int = 3) -> str:
    return "-".join(rng.choice(TOKENS) for _ in range(rng.randint(1, parts)))


def _entries(rng: random.Random, most: int, echoes: list[str] | None = None) -> list[dict[str, str]]:
    """Entries named at random or, from ``echoes``, after another owner's claims, which is how claims
    of different owners come to share names (BEHAVIOUR.md §9 items 1 and 8)."""
    entries = []
    for _ in range(rng.randint(0, most)):
        if echoes and rng.random() < 0.6:
            entries.append({"name": rng.choice(echoes), "scope": "PerReplica"})
        else:
            entries.append({"name": _name(rng), "scope": rng.choice(SCOPES)})
    return entries


def random_spec(seed: int) -> dict[str, Any]:
    """A spec whose names are made of hyphenated numbers and keywords, so that claim names collide."""
    rng = random.Random(seed)
    cliques = [{"name": c, "spec": {"replicas": rng.randint(0, 11)}, "resourceSharing": _entries(rng, 2)}
               for c in dict.fromkeys(_name(rng, 2) for _ in range(rng.randint(1, 4)))]
    echoes = [
        f"{c['name']}-{'all' if e['scope'] == 'AllReplicas' else rng.choice(['0', '1'])}-{e['name']}"
        for c in cliques
        for e in c["resourceSharing"]
    ]
    grouped: set[str] = set()
    groups = []
    for _ in range(rng.randint(0, 2)):
        members = [c["name"] for c in cliques if c["name"] not in grouped and rng.random() < 0.5]
        grouped.update(members)
        groups.append({"name": _name(rng, 2), "cliqueNames": members, "replicas": rng.randint(0, 11), "resourceSharing": _entries(rng, 2, echoes)})
    return {
        "metadata": {"name": _name(rng, 2)},
        "spec": {
            "replicas": rng.randint(0, 11),
            "template": {"resourceSharing": _entries(rng, 3, echoes), "cliques": cliques, "podCliqueScalingGroups": groups},
        },
    }
