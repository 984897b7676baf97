"""The release's two webhook configurations, by name: the ValidatingWebhookConfiguration of
PodCliqueSets and the MutatingWebhookConfiguration of pods (the chart names both ``<fullname>``).

Read and written as the API server sends them (plain JSON, every field kept), each write a PUT of
the object read with its ``resourceVersion``, so a change made by someone else in between is never
overwritten: the write fails with a conflict and is made again from a fresh read.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.kube.api import MUTATINGWEBHOOKCONFIGURATIONS, NOT_FOUND, VALIDATINGWEBHOOKCONFIGURATIONS, Objects

Obj = dict[str, Any]
KINDS = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")


@dataclass
class Configuration:
    kind: str
    obj: Obj

    @property
    def name(self) -> str:
        return str(self.obj["metadata"]["name"])

    def bundles(self) -> list[bytes]:
        """The ``caBundle`` of each of its webhooks (PEM; empty where there is none)."""
        return [decode_base64(webhook.get("clientConfig", {}).get("caBundle")) for webhook in self.obj.get("webhooks") or []]

    def with_bundle(self, pem: bytes) -> Obj:
        """The object with ``pem`` as the ``caBundle`` of every webhook."""
        encoded = base64.b64encode(pem).decode()
        webhooks = [{**w, "clientConfig": {**w.get("clientConfig", {}), "caBundle": encoded}} for w in self.obj.get("webhooks") or []]
        return {**self.obj, "webhooks": webhooks}


def decode_base64(value: str | None) -> bytes:
    """A base64 value of the API (a caBundle, a Secret's data); one that is not reads as empty."""
    try:
        return base64.b64decode(value or "", validate=True)
    except (binascii.Error, ValueError):
        return b""


class WebhookConfigurations:
    """The configurations of one name, through ``api`` (a guarded client names what it may touch):
    both ``KINDS``, or the kinds the release has (no validating one where a policy decides)."""

    def __init__(self, api: client.ApiClient, name: str, kinds: tuple[str, ...] = KINDS) -> None:
        self.name = name
        self.kinds = kinds
        plurals = {KINDS[0]: VALIDATINGWEBHOOKCONFIGURATIONS, KINDS[1]: MUTATINGWEBHOOKCONFIGURATIONS}
        self._kinds = {kind: Objects(api, plurals[kind]) for kind in kinds}

    def read(self) -> list[Configuration | None]:
        """Each kind's configuration, None where it does not exist (the order of ``kinds``)."""
        found: list[Configuration | None] = []
        for kind, objects in self._kinds.items():
            try:
                found.append(Configuration(kind, objects.get(self.name)))
            except ApiException as err:
                if err.status != NOT_FOUND:
                    raise
                found.append(None)
        return found

    def replace(self, configuration: Configuration, obj: Obj) -> None:
        self._kinds[configuration.kind].replace(obj)

    def delete(self, kind: str) -> bool:
        """Deletes the configuration of ``kind``; False when there was none (already gone)."""
        try:
            self._kinds[kind].delete(self.name)
        except ApiException as err:
            if err.status != NOT_FOUND:
                raise
            return False
        return True
