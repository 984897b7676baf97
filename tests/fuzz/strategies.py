"""Inputs a careless or hostile caller can send: JSON of every shape, bytes that are not JSON, and
the real example reviews with one part broken at a time."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[2]
ADMISSION = ROOT / "examples" / "admission"
OBJECTS = ROOT / "examples" / "objects"
EXAMPLES = {path.name: json.loads(path.read_bytes()) for path in sorted(ADMISSION.glob("*.json"))}
POD_EXAMPLES = sorted(name for name in EXAMPLES if name.startswith("pod-"))
PCS_EXAMPLES = sorted(name for name in EXAMPLES if name.startswith("pcs-"))

ODD_STRINGS = [
    "",
    " ",
    "\x00",
    "a\nb",
    "\r\n",
    "\u2028",
    "\ufeff",
    "\u0301",
    "é",
    "<>&",
    "\uffff",
    "🦄",
    "٣",
    "-",
    "~1/",
    "rs-test",
    "rs-test-0-worker-a",
    "CREATE",
    "UPDATE",
    "AllReplicas",
    "PerReplica",
    "Pod",
    "PodCliqueSet",
    "admission.k8s.io/v1",
    "1Gi",
    "9" * 30,
    "9" * 5000,
    "0" * 3000 + "x",
    "1e" + "9" * 5000,
    "x" * 10_000,
]
"""Strings that have broken parsers before: control characters, separators, combining marks, non-ASCII
digits, JSON Pointer escapes, Kubernetes words, numbers too long for ``int`` and quantity-shaped text."""

ODD_INTEGERS = [0, -1, 2**31 - 1, 2**31, -(2**31) - 1, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**40]

texts = st.text(max_size=12) | st.sampled_from(ODD_STRINGS)
integers = st.integers(min_value=-(2**70), max_value=2**70) | st.sampled_from(ODD_INTEGERS)
scalars = st.none() | st.booleans() | integers | st.floats(allow_nan=False, allow_infinity=False) | texts
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)


class Nested:
    """``value`` inside ``depth`` lists (or objects of one member, ``"a"``): written out only by
    ``dumps``, since a value hundreds of levels deep is too deep for Python's recursive copying,
    printing and encoding."""

    def __init__(self, depth: int, value: Any, objects: bool = False) -> None:
        self.depth = depth
        self.value = value
        self.objects = objects

    def around(self, inner: str) -> str:
        opening, closing = ('{"a":', "}") if self.objects else ("[", "]")
        return opening * self.depth + inner + closing * self.depth


def dumps(value: Any) -> bytes:
    """JSON as a caller may write it: integers of any size, non-ASCII left unescaped, ``NaN`` or
    ``Infinity`` when the value holds them (Python writes them; JSON has no such tokens), and each
    ``Nested`` written out in full."""
    deep: list[Nested] = []

    def placeholder(nested: Any) -> str:
        if not isinstance(nested, Nested):
            raise TypeError(f"cannot write {type(nested).__name__} as JSON")
        deep.append(nested)
        return f"\0nested-{len(deep) - 1}\0"

    text = json.dumps(value, ensure_ascii=False, allow_nan=True, default=placeholder)
    for index, nested in enumerate(deep):
        inner = dumps(nested.value).decode()
        text = text.replace(json.dumps(f"\0nested-{index}\0"), nested.around(inner))
    return text.encode()


GVKS = [
    {"group": "", "version": "v1", "kind": "Pod"},
    {"group": "grove.io", "version": "v1alpha1", "kind": "PodCliqueSet"},
]
objects = st.fixed_dictionaries(
    {},
    optional={
        "apiVersion": st.sampled_from(["v1", "grove.io/v1alpha1"]) | json_values,
        "kind": st.sampled_from(["Pod", "PodCliqueSet"]) | json_values,
        "metadata": st.fixed_dictionaries(
            {},
            optional={
                "name": texts | json_values,
                "namespace": texts,
                "labels": st.dictionaries(
                    st.sampled_from(["grove.io/podclique", "app.kubernetes.io/part-of", "grove.io/podclique-pod-index"]) | texts,
                    texts | json_values,
                    max_size=4,
                )
                | json_values,
            },
        )
        | json_values,
        "spec": json_values,
    },
)
reviews = st.fixed_dictionaries(
    {},
    optional={
        "apiVersion": st.sampled_from(["admission.k8s.io/v1", "admission.k8s.io/v1beta1"]) | json_values,
        "kind": st.just("AdmissionReview") | json_values,
        "request": st.fixed_dictionaries(
            {"uid": st.text(min_size=1, max_size=8) | json_values},
            optional={
                "kind": st.sampled_from(GVKS) | json_values,
                "operation": st.sampled_from(["CREATE", "UPDATE", "DELETE", "CONNECT"]) | json_values,
                "name": texts | json_values,
                "namespace": texts | json_values,
                "dryRun": st.booleans() | json_values,
                "object": objects | json_values,
                "oldObject": objects | json_values,
            },
        )
        | json_values,
    },
)
"""AdmissionReview-shaped values where any member may be missing, of the wrong type or odd."""


@st.composite
def damaged(draw: st.DrawFn, body: bytes) -> bytes:
    """``body`` cut short, or with bytes inserted or overwritten (often not UTF-8 any more)."""
    data = bytearray(body)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(data)))
        how = draw(st.sampled_from(["truncate", "insert", "overwrite"]))
        noise = draw(st.binary(min_size=1, max_size=4) | st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\\u"]))
        if how == "truncate":
            del data[at:]
        elif how == "insert":
            data[at:at] = noise
        else:
            data[at : at + len(noise)] = noise
    return bytes(data)


Location = tuple[str | int, ...]


def paths(value: Any, prefix: Location = ()) -> Iterator[Location]:
    """Every member's path in ``value``, parents before children."""
    yield prefix
    if isinstance(value, dict):
        for key, child in value.items():
            yield from paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from paths(child, (*prefix, index))


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def _stringified(value: Any) -> Any:
    return value if isinstance(value, str) else dumps(value).decode()


Replace = Callable[[st.DrawFn, Any], Any]
REPLACEMENTS: dict[str, Replace] = {
    "null": lambda draw, value: None,
    "any-json": lambda draw, value: draw(json_values),
    "odd-string": lambda draw, value: draw(st.sampled_from(ODD_STRINGS)),
    "odd-integer": lambda draw, value: draw(st.sampled_from(ODD_INTEGERS)),
    "stringified": lambda draw, value: _stringified(value),
    "wrapped-in-list": lambda draw, value: [value],
    "wrapped-in-object": lambda draw, value: {"value": value},
    "emptied": lambda draw, value: type(value)() if isinstance(value, dict | list | str) else 0,
    "repeated": lambda draw, value: value[:1] * draw(st.sampled_from([1000, 3000])),
}
"""What a member's value can become (besides being nested deep)."""


CHANGES = ["delete", "snake-case-key", "duplicate", "nested", "odd-member", *REPLACEMENTS]


def _applies(change: str, path: Location, value: Any) -> bool:
    """Whether ``change`` can be made to ``value`` at ``path``: the root can only be replaced or get
    a member, a key renamed only when it has a capital (a Kubernetes camelCase name), only a list
    element duplicated, and only an object given a member."""
    if change == "odd-member":
        return isinstance(value, dict)
    if change == "repeated":
        return isinstance(value, list) and bool(value) and bool(path)
    if not path:
        return change in REPLACEMENTS
    last = path[-1]
    if change == "snake-case-key":
        return isinstance(last, str) and last != last.lower()
    if change == "duplicate":
        return isinstance(last, int)
    return True


TYPE_CHANGES = frozenset({"null", "any-json", "stringified", "wrapped-in-list", "wrapped-in-object", "nested"})


def _keeps_type(change: str, value: Any) -> bool:
    """Whether ``change`` leaves ``value`` of the JSON type it had (so a schema may still take it)."""
    if change in TYPE_CHANGES:
        return False
    if change == "odd-string":
        return isinstance(value, str)
    if change == "odd-integer":
        return isinstance(value, int) and not isinstance(value, bool)
    return True


def _at(document: Any, path: Location) -> Any:
    for part in path:
        document = document[part]
    return document


@st.composite
def mutated(
    draw: st.DrawFn, document: Any, max_changes: int = 3, depths: tuple[int, ...] = (64, 300, 2000), keep_types: bool = False
) -> Any:
    """``document`` with one to ``max_changes`` members deleted, renamed, duplicated, replaced or
    nested ``depths`` levels deep. orjson reads up to 1024 levels and writes up to 255: 300 is
    between the two, 2000 beyond both. With ``keep_types`` every value keeps its JSON type, as a
    schema (a CRD's) wants: what reaches code behind a schema."""
    document = copy.deepcopy(document)
    for _ in range(draw(st.integers(1, max_changes))):
        change = draw(st.sampled_from(CHANGES))
        candidates = [
            path for path in paths(document)
            if _applies(change, path, _at(document, path)) and (not keep_types or _keeps_type(change, _at(document, path)))
        ]
        if not candidates:
            continue
        path = draw(st.sampled_from(candidates))
        if change == "odd-member":
            # An unknown member, or a known one in an odd place; its name may be any text (a label
            # key with a line break, say), and Kubernetes-style error paths quote it.
            _at(document, path)[draw(st.sampled_from(ODD_STRINGS) | texts)] = draw(json_values)
            continue
        if not path:
            document = REPLACEMENTS[change](draw, document)
            continue
        parent = _at(document, path[:-1])
        last = path[-1]
        if change == "delete":
            del parent[last]
        elif change == "snake-case-key":
            # A Python-style name for a Kubernetes field: Kubernetes does not know it, so neither must we.
            parent[_snake(str(last))] = parent.pop(last)
        elif change == "duplicate":
            parent.insert(last, copy.deepcopy(parent[last]))
        elif change == "nested":
            parent[last] = Nested(draw(st.sampled_from(depths)), parent[last])
        else:
            parent[last] = REPLACEMENTS[change](draw, parent[last])
        if change == "repeated":
            break  # one list a thousand times longer is the point; one inside another only costs memory
    return document


QUANTITY_LIKE = r"[+-]?[0-9]{0,40}(\.[0-9]{0,20})?([eEinumkKMGTP]{0,3}[+-]?[0-9]{0,12})?"
ODD_QUANTITIES = ["0" * 3000 + "x", "1e" + "9" * 5000, "1" + "0" * 5000 + "e-5000", "1" * 100_000 + "k", "0." + "0" * 5000 + "1"]
"""Quantity-shaped text too long for a backtracking pattern, for ``int`` or for decimal's exponents."""
ENTRY_NAMES = ["0", "1", "00", "2147483648", "9" * 5000, "int-tpl", "int-tpl-0", "rs-test-0", "a-1-b"]
"""Names whose claim names end in numbers: the claim-name collision check compares them as indices."""


@st.composite
def with_device_values(draw: st.DrawFn, document: Any) -> Any:
    """A PodCliqueSet review whose templates request a fuzzed capacity and pass fuzzed opaque
    parameters (the only values Go keeps raw), and whose PodCliqueSet-level entries have names that
    end claim names in numbers. On UPDATE the old object gets the same values or others."""
    document = copy.deepcopy(document)
    request = document["request"]
    for key in ("object", "oldObject"):
        if not isinstance(request.get(key), dict) or (key == "oldObject" and draw(st.booleans())):
            continue
        template = request[key]["spec"]["template"]
        capacity = draw(
            st.from_regex(QUANTITY_LIKE, fullmatch=True) | st.sampled_from(ODD_QUANTITIES) | texts | integers | st.floats(allow_nan=False)
        )
        parameters = draw(json_values | st.builds(Nested, st.sampled_from([100, 101, 300, 1000]), json_values))
        for config in template.get("resourceClaimTemplates") or []:
            devices = config["templateSpec"]["spec"]["devices"]
            devices["requests"][0]["exactly"]["capacity"] = {"requests": {"memory": capacity}}
            devices["config"] = [{"opaque": {"driver": "gpu.example.com", "parameters": parameters}}]
        for entry in template.get("resourceSharing") or []:
            entry["name"] = draw(st.sampled_from(ENTRY_NAMES))
    return document


@st.composite
def with_odd_label(draw: st.DrawFn, document: Any) -> Any:
    """``document`` whose object has one more label, of any name and any value: a label key is part
    of the path an error names, so whatever it holds ends up in a message."""
    document = copy.deepcopy(document)
    obj = document["request"].get("object")
    if isinstance(obj, dict):
        obj.setdefault("metadata", {}).setdefault("labels", {})[draw(st.sampled_from(ODD_STRINGS) | texts)] = draw(json_values)
    return document
