"""PodCliqueSets read once per distinct content, and what the rules said of them, remembered.

The validating webhook sees the same PodCliqueSet many times: every UPDATE carries the object twice,
controllers update metadata and replicas over and over, and a retried or dry-run request repeats a
CREATE. Everything the rules decide depends only on the members the read model declares
(``model.members``), and of those not on the ones that change on every write (uid,
resourceVersion, owner references, deletion timestamp), once they are known to be readable. So a
PodCliqueSet is keyed by the JSON of the other members, and the key finds the parsed model, whether
its templates decode, the create-time errors and warnings, and the text the immutability rules
compare, each computed the first time it is asked for.

The cache holds ``SIZE`` objects, least recently used first out; an object whose key is larger than
``LARGEST`` bytes, or too deep to write as JSON, is read every time instead.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import orjson
from pydantic import ValidationError

from webhook.core.admission.request import first_problem
from webhook.core.gocompat import dra
from webhook.core.gocompat.gotypes import DecodeError
from webhook.core.model.meta import ObjectMeta
from webhook.core.model.members import read_members
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.model.projection import project
from webhook.core.pcs.immutability import raw_templates
from webhook.core.pcs.rules import validate_create
from webhook.core.pcs.warnings import claim_warnings

SIZE = 512
LARGEST = 256 * 1024
VOLATILE = ("uid", "resourceVersion", "ownerReferences", "deletionTimestamp")
"""Metadata that changes on every write and that no rule reads."""

_UNSET: Any = object()


@dataclass(slots=True)
class PodCliqueSetRead:
    """One PodCliqueSet content: its model (or why it cannot be read) and what the rules said."""

    model: PodCliqueSet | None
    problem: str = ""
    """Why the object cannot be read as a PodCliqueSet (``path: problem``), when ``model`` is None."""
    _templates_problem: Any = field(default=_UNSET)
    _checked: Any = field(default=_UNSET)
    _immutable_text: Any = field(default=_UNSET)

    @property
    def pcs(self) -> PodCliqueSet:
        assert self.model is not None, "read"
        return self.model

    def templates_problem(self) -> str | None:
        """Where Go's decoder would refuse the claim templates (``path: problem``), or None."""
        if self._templates_problem is _UNSET:
            try:
                dra.decode_templates(raw_templates(self.pcs.spec.template))
                self._templates_problem = None
            except DecodeError as err:
                self._templates_problem = err.at(dra.PATH)
        result: str | None = self._templates_problem
        return result

    def checked(self) -> tuple[list[str], list[str]]:
        """The create-time errors (as messages) and the warnings beyond Grove."""
        if self._checked is _UNSET:
            pcs = self.pcs
            self._checked = ([str(e) for e in validate_create(pcs)], claim_warnings(project(pcs)))
        messages, warnings = self._checked
        return list(messages), list(warnings)

    def immutable_text(self) -> bytes | None:
        """The members the immutability rules compare, as JSON text: two objects with the same text
        have nothing to compare. None when the text cannot be written (nested too deep)."""
        if self._immutable_text is _UNSET:
            template = self.pcs.spec.template
            compared = (
                raw_templates(template),
                [e.model_dump(by_alias=True) for e in template.resource_sharing],
                [(c.name, [e.model_dump(by_alias=True) for e in c.resource_sharing]) for c in template.cliques],
                [(g.name, [e.model_dump(by_alias=True) for e in g.resource_sharing]) for g in template.pod_clique_scaling_groups],
            )
            self._immutable_text = _text(compared)
        text: bytes | None = self._immutable_text
        return text


def _text(value: Any) -> bytes | None:
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return None


def _read(members: Any) -> PodCliqueSetRead:
    try:
        return PodCliqueSetRead(PodCliqueSet.model_validate(members))
    except ValidationError as err:
        return PodCliqueSetRead(None, first_problem(err))


def _volatile_readable(obj: dict[str, Any]) -> bool:
    """Whether the members left out of the key can be read: then they cannot change the outcome."""
    metadata = obj.get("metadata")
    if metadata is None:
        return True
    if not isinstance(metadata, dict):
        return False
    try:
        ObjectMeta.model_validate({name: metadata[name] for name in VOLATILE if name in metadata})
    except ValidationError:
        return False
    return True


class PodCliqueSetReads:
    def __init__(self, size: int = SIZE) -> None:
        self.size = size
        self._reads: OrderedDict[bytes, PodCliqueSetRead] = OrderedDict()

    def __len__(self) -> int:
        return len(self._reads)

    def read(self, obj: Any) -> PodCliqueSetRead:
        """The object read as a PodCliqueSet: from memory when the same content was read lately."""
        if not isinstance(obj, dict) or not _volatile_readable(obj):
            return _read(obj)
        members = read_members(PodCliqueSet, obj)
        metadata = members.get("metadata")
        if isinstance(metadata, dict):
            for name in VOLATILE:
                metadata.pop(name, None)
        key = _text(members)
        if key is None or len(key) > LARGEST:
            return _read(members)
        found = self._reads.get(key)
        if found is not None:
            self._reads.move_to_end(key)
            return found
        found = self._reads[key] = _read(members)
        if len(self._reads) > self.size:
            self._reads.popitem(last=False)
        return found
