"""PodCliqueSets read once per distinct content, and what the rules said of them, remembered.

The validating webhook sees the same PodCliqueSet many times: every UPDATE carries the object twice,
controllers update metadata and replicas over and over, and a retried or dry-run request repeats a
CREATE. Everything the rules decide depends only on the members the read model declares, and of those not
on the ones that change on every write (uid, resourceVersion, owner references, deletion
timestamp), once they are known to be readable. So a PodCliqueSet is keyed by the JSON of its
``sharing_members``: the object without its status, pod specs and the metadata no rule reads. The
key finds the parsed model, whether its templates decode, the create-time errors and warnings, and
the text the immutability rules compare, each computed the first time it is asked for.

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
from webhook.core.model.meta import read_owner_references
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.model.projection import PodCliqueSetSharing, project
from webhook.core.pcs.immutability import raw_templates
from webhook.core.pcs.rules import validate_create
from webhook.core.pcs.warnings import claim_warnings, limit_warnings

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
    _projection: Any = field(default=_UNSET)
    _over_limit: Any = field(default=_UNSET)
    _immutable_text: Any = field(default=_UNSET)
    _templates_text: Any = field(default=_UNSET)

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
            self._checked = ([str(e) for e in validate_create(pcs)], claim_warnings(self._projected()))
        messages, warnings = self._checked
        return list(messages), list(warnings)

    def over_limit(self, limit: int) -> list[str]:
        """Warnings about owners needing more than ``limit`` claims at the spec's replicas."""
        if self._over_limit is _UNSET or self._over_limit[0] != limit:
            self._over_limit = (limit, limit_warnings(self._projected(), limit))
        warnings: list[str] = self._over_limit[1]
        return list(warnings)

    def _projected(self) -> PodCliqueSetSharing:
        if self._projection is _UNSET:
            self._projection = project(self.pcs)
        projection: PodCliqueSetSharing = self._projection
        return projection

    def templates_text(self) -> bytes | None:
        """The claim templates as sent, as JSON text (an absent list as an empty one); None when the
        text cannot be written (nested deeper than orjson writes)."""
        if self._templates_text is _UNSET:
            self._templates_text = _text(raw_templates(self.pcs.spec.template) or [])
        text: bytes | None = self._templates_text
        return text

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
    """Whether the members left out of the key can be read (as ``ObjectMeta`` reads them: text or
    null, and owner references as ``meta.OwnerReference``): then they cannot change the outcome."""
    metadata = obj.get("metadata")
    if metadata is None:
        return True
    if not isinstance(metadata, dict):
        return False
    for name in ("uid", "resourceVersion", "deletionTimestamp"):
        value = metadata.get(name)
        if value is not None and type(value) is not str:
            return False
    references = metadata.get("ownerReferences")
    if references:
        try:
            read_owner_references(references)
        except ValueError:
            return False
    return True


KEPT_METADATA = ("name", "generateName", "namespace", "labels")
"""The metadata the read model declares, less ``VOLATILE``."""


def _only(value: Any, names: tuple[str, ...]) -> Any:
    return {name: value[name] for name in names if name in value} if isinstance(value, dict) else value


def sharing_members(obj: dict[str, Any]) -> dict[str, Any]:
    """The object with what no decision reads left out: members of the object, its metadata, spec,
    template and clique specs other than those the model declares (pod specs, status, managed
    fields). Other members are kept as they are: they only make the key more particular. A member
    of the wrong type is kept as it is, so reading the result fails as reading the object would."""
    kept = _only(obj, ("apiVersion", "kind", "metadata", "spec"))
    if "metadata" in kept:
        kept["metadata"] = _only(kept["metadata"], KEPT_METADATA)
    spec = kept.get("spec")
    if isinstance(spec, dict):
        spec = kept["spec"] = _only(spec, ("replicas", "template"))
        template = spec.get("template")
        if isinstance(template, dict):
            template = spec["template"] = _only(
                template, ("cliques", "podCliqueScalingGroups", "resourceClaimTemplates", "resourceSharing")
            )
            cliques = template.get("cliques")
            if isinstance(cliques, list):
                template["cliques"] = [_clique(c) for c in cliques]
    return kept


def _clique(clique: Any) -> Any:
    if not isinstance(clique, dict) or not isinstance(clique.get("spec"), dict):
        return clique
    return {**clique, "spec": _only(clique["spec"], ("replicas", "autoScalingConfig"))}


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
        members = sharing_members(obj)
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
