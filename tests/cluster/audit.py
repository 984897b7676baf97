"""The API server's audit log of the release's ServiceAccounts: which component (by its
User-Agent) made which request, and how it was answered."""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Request:
    component: str
    """``webhook``, ``reconciler``, ... from the User-Agent ``grove-sharing-webhook/<version> (<component>)``."""
    user: str
    """``system:serviceaccount:<namespace>:<name>``."""
    verb: str
    group: str
    resource: str
    namespace: str
    name: str
    code: int
    received: datetime.datetime
    authorization: str = ""
    """The authorizer's decision, ``allow`` or ``forbid`` (a 403 may also be another admission's,
    such as a namespace being terminated refusing new objects)."""


def requests(log: Path) -> list[Request]:
    found = []
    for line in log.read_text().splitlines():
        event = json.loads(line)
        agent, ref = event.get("userAgent", ""), event.get("objectRef") or {}
        component = agent.rpartition("(")[2].rstrip(")") if agent.startswith("grove-sharing-webhook/") else agent
        resource = ref.get("resource", "") + (f"/{ref['subresource']}" if ref.get("subresource") else "")
        received = datetime.datetime.fromisoformat(event["requestReceivedTimestamp"].replace("Z", "+00:00"))
        found.append(Request(component, event.get("user", {}).get("username", ""), event["verb"], ref.get("apiGroup", ""), resource, ref.get("namespace", ""),
                             ref.get("name", ""), event.get("responseStatus", {}).get("code", 0), received,
                             (event.get("annotations") or {}).get("authorization.k8s.io/decision", "")))
    return found
