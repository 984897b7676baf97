"""Access to the API server: a client from a kubeconfig or the in-cluster service account, as
kubectl finds them, and the one table of what each component may call with it.

The Helm chart's RBAC rules are written from ``ACCESS`` (a test compares them), so that the chart
grants exactly what the code uses. ``GuardedApiClient`` names every request as the API server's
authorizer does and refuses one the table does not declare, so that a test running every code path
proves the table covers every call, whatever made it (a typed API class, the leader-election lock).
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml
from kubernetes import client, config
from kubernetes.config.config_exception import ConfigException

from webhook import __version__
from webhook.kube.api import (
    EVENTS, LEASES, MUTATINGWEBHOOKCONFIGURATIONS, PODCLIQUES, PODCLIQUESCALINGGROUPS, PODCLIQUESETS, PODS, RESOURCECLAIMS,
    RESOURCECLAIMTEMPLATES, SECRETS, SUBJECTACCESSREVIEWS, VALIDATINGWEBHOOKCONFIGURATIONS, Resource,
)

DEFAULT_KUBECONFIG = "~/.kube/config"
SERVICE_ACCOUNT_NAMESPACE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


class Component(StrEnum):
    WEBHOOK = "webhook"
    RECONCILER = "reconciler"
    CERTIFICATES = "certificates"
    """``serve --cert-secret``'s controller: a client of its own, for an audit log and RBAC apart."""
    UNREGISTER = "unregister"
    """``webhook unregister``, the chart's pre-delete hook."""
    STATUS = "status"
    """``webhook status``, run by a person: not in the chart; the README gives its Role."""


class Reach(StrEnum):
    CLUSTER = "cluster"
    """Objects in any namespace, or cluster-scoped ones (a ClusterRole)."""
    WORKLOAD = "workload"
    """Objects in the namespaces the component watches: a Role in each when told some, else a ClusterRole."""
    OWN_NAMESPACE = "own-namespace"
    """Objects in the namespace the component runs in (a Role)."""


@dataclass(frozen=True, slots=True)
class Rule:
    resource: Resource
    verbs: tuple[str, ...]
    reach: Reach
    named: bool = False
    """Only the objects the component is given by name (``resourceNames`` in the chart's rule)."""


ACCESS: dict[Component, tuple[Rule, ...]] = {
    Component.WEBHOOK: (
        Rule(PODCLIQUESETS, ("get", "list", "watch"), Reach.WORKLOAD),
        # May the user creating a PodCliqueSet read the templates of other namespaces it names (DECISIONS.md §3.1)?
        # SubjectAccessReviews are cluster-scoped: a ClusterRole even with namespaced RBAC.
        Rule(SUBJECTACCESSREVIEWS, ("create",), Reach.CLUSTER),
        # Does an external template a PodCliqueSet CREATE names exist (DECISIONS.md §3.4)? Of any
        # namespace, as the templates of other namespaces.
        Rule(RESOURCECLAIMTEMPLATES, ("get",), Reach.CLUSTER),
    ),
    Component.RECONCILER: (
        # get: an owner is read before a claim its cache calls stale is deleted.
        Rule(PODCLIQUESETS, ("get", "list", "watch"), Reach.WORKLOAD),
        Rule(PODCLIQUESCALINGGROUPS, ("get", "list", "watch"), Reach.WORKLOAD),
        Rule(PODCLIQUES, ("get", "list", "watch"), Reach.WORKLOAD),
        Rule(RESOURCECLAIMS, ("create", "delete", "get", "list", "patch", "watch"), Reach.WORKLOAD),
        # External templates may live in any namespace (BEHAVIOUR.md §6.1), whatever the workloads'.
        Rule(RESOURCECLAIMTEMPLATES, ("get",), Reach.CLUSTER),
        Rule(EVENTS, ("create", "patch"), Reach.WORKLOAD),
        Rule(LEASES, ("create", "get", "update"), Reach.OWN_NAMESPACE),
    ),
    Component.CERTIFICATES: (
        # The chart creates the Secret (empty): create cannot be limited to a name, update and get can.
        Rule(SECRETS, ("get", "update"), Reach.OWN_NAMESPACE, named=True),
        # caBundle of the release's two webhook configurations, and nothing else of any other.
        Rule(VALIDATINGWEBHOOKCONFIGURATIONS, ("get", "update"), Reach.CLUSTER, named=True),
        Rule(MUTATINGWEBHOOKCONFIGURATIONS, ("get", "update"), Reach.CLUSTER, named=True),
    ),
    Component.UNREGISTER: (
        Rule(VALIDATINGWEBHOOKCONFIGURATIONS, ("delete",), Reach.CLUSTER, named=True),
        Rule(MUTATINGWEBHOOKCONFIGURATIONS, ("delete",), Reach.CLUSTER, named=True),
    ),
    Component.STATUS: tuple(
        Rule(resource, ("list",), Reach.WORKLOAD)
        for resource in (PODCLIQUESETS, PODCLIQUESCALINGGROUPS, PODCLIQUES, RESOURCECLAIMS, RESOURCECLAIMTEMPLATES, PODS, EVENTS)
    ),
}


@dataclass(frozen=True, slots=True)
class ApiRequest:
    """What the authorizer sees in a request: the verb and the object or collection it names."""

    verb: str
    group: str
    version: str
    resource: str
    namespace: str | None
    name: str | None
    subresource: str | None

    def __str__(self) -> str:
        what = f"{self.resource}.{self.group}" if self.group else self.resource
        what += f"/{self.subresource}" if self.subresource else ""
        where = f" in namespace {self.namespace!r}" if self.namespace else " across namespaces"
        return f"{self.verb} {what}{where}"


class AccessDenied(Exception):
    """A request outside the component's table: a programming error, never retried."""


_WATCH_VALUES = ("1", "t", "T", "true", "TRUE", "True")
"""What Go's ``strconv.ParseBool`` reads as true, as the API server reads ``?watch=``."""
_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}


def _verb(method: str, name: str | None, watch: bool) -> str:
    if method == "GET":
        return "get" if name else "watch" if watch else "list"
    if method == "DELETE":
        return "delete" if name else "deletecollection"
    return _VERBS.get(method, method.lower())


def _resource_path(path: str) -> tuple[str, str, bool, str | None, list[str]] | None:
    """(group, version, whether it is a watch's, namespace, the segments after) of an API path."""
    segments = [s for s in path.split("/") if s]
    if segments[:2] == ["api", "v1"]:
        group, version, rest = "", "v1", segments[2:]
    elif segments[:1] == ["apis"] and len(segments) >= 3:
        group, version, rest = segments[1], segments[2], segments[3:]
    else:
        return None
    watch = rest[:1] == ["watch"]
    rest = rest[1:] if watch else rest
    if len(rest) >= 3 and rest[0] == "namespaces":
        return group, version, watch, rest[1], rest[2:]
    return group, version, watch, None, rest


def api_request(method: str, url: str) -> ApiRequest | None:
    """The request as RBAC names it, or None for a path that names no resource (discovery)."""
    parts = urlsplit(url)
    found = _resource_path(parts.path)
    if found is None or not found[4]:
        return None
    group, version, watch, namespace, (resource, *rest) = found
    name = rest[0] if rest else None
    subresource = rest[1] if len(rest) > 1 else None
    watch = watch or any(v in _WATCH_VALUES for v in parse_qs(parts.query).get("watch", []))
    return ApiRequest(_verb(method.upper(), name, watch), group, version, resource, namespace, name, subresource)


class Access:
    """One component's table, checked request by request; counts the requests it allowed."""

    def __init__(self, component: Component, own_namespace: str | None = None, names: frozenset[str] = frozenset()) -> None:
        self.component = component
        self.rules = ACCESS[component]
        self.own_namespace = own_namespace
        self.names = names  # the objects ``named`` rules allow
        self._calls: Counter[tuple[str, str, str]] = Counter()
        self._lock = threading.Lock()

    def check(self, request: ApiRequest) -> None:
        if not any(self._allows(rule, request) for rule in self.rules):
            raise AccessDenied(f"the {self.component} may not {request} (not in its access table)")
        with self._lock:
            self._calls[(request.group, request.resource, request.verb)] += 1

    def _allows(self, rule: Rule, request: ApiRequest) -> bool:
        resource = rule.resource
        return (
            (resource.group, resource.version, resource.plural) == (request.group, request.version, request.resource)
            and not request.subresource
            and request.verb in rule.verbs
            and (rule.reach is not Reach.OWN_NAMESPACE or request.namespace == self.own_namespace)
            and (not rule.named or request.name in self.names)
        )

    @property
    def calls(self) -> Counter[tuple[str, str, str]]:
        """Requests allowed so far, by (group, resource, verb)."""
        with self._lock:
            return Counter(self._calls)


POOL_SIZE = 32  # connections per client: each watch holds one for good, and claims are written several at once


class GuardedApiClient(client.ApiClient):
    """An ``ApiClient`` that sends only what its component's access table allows, with a timeout."""

    def __init__(self, configuration: client.Configuration, access: Access, request_timeout: tuple[float, float] | None = None) -> None:
        configuration.connection_pool_maxsize = max(configuration.connection_pool_maxsize or 0, POOL_SIZE)
        super().__init__(configuration)
        self.access = access
        self.request_timeout = request_timeout
        self.user_agent = f"grove-sharing-webhook/{__version__} ({access.component})"

    def call_api(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        request = api_request(method, url)
        if request is None:
            raise AccessDenied(f"the {self.access.component} may not {method} {urlsplit(url).path}")
        self.access.check(request)
        if kwargs.get("_request_timeout") is None and self.request_timeout is not None:
            kwargs["_request_timeout"] = self.request_timeout
        return super().call_api(method, url, *args, **kwargs)


def guarded(
    api: client.ApiClient, component: Component, own_namespace: str | None = None,
    request_timeout: tuple[float, float] | None = None, names: frozenset[str] = frozenset(),
) -> GuardedApiClient:
    """A guarded client with ``api``'s configuration (server, credentials, TLS)."""
    return GuardedApiClient(api.configuration, Access(component, own_namespace, names), request_timeout)


class KubeConfigError(Exception):
    """No usable cluster configuration; the message is one line for the command line."""


def in_cluster() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST"))


def default_kubeconfig() -> str:
    """``KUBECONFIG``, else ``~/.kube/config``: read now, where the library reads it once, when imported."""
    return os.environ.get("KUBECONFIG") or DEFAULT_KUBECONFIG


def api_client(kubeconfig: str | None = None, context: str | None = None) -> client.ApiClient:
    """A client for ``kubeconfig`` if given, else the in-cluster configuration in a pod (unless a
    ``context`` is asked for, which only a kubeconfig has), else the default kubeconfig."""
    config_file = _config_file(kubeconfig, context)
    try:
        if config_file is None:
            configuration = client.Configuration()
            config.load_incluster_config(client_configuration=configuration)
            return client.ApiClient(configuration)
        return config.new_client_from_config(config_file=config_file, context=context)
    except (ConfigException, OSError, TypeError, ValueError, yaml.YAMLError) as err:
        where = "in-cluster configuration" if config_file is None else f"kubeconfig {config_file}"
        raise KubeConfigError(f"cannot load {where}: {err}".replace("\n", " ")) from None


def _config_file(kubeconfig: str | None, context: str | None) -> str | None:
    """The kubeconfig to load, or None for the in-cluster configuration."""
    if kubeconfig and not Path(kubeconfig).expanduser().is_file():
        raise KubeConfigError(f"cannot load kubeconfig {kubeconfig}: no such file")
    if kubeconfig:
        return kubeconfig
    if in_cluster() and not context:
        return None
    default = default_kubeconfig()
    if not any(Path(p).expanduser().is_file() for p in default.split(os.pathsep) if p):
        raise KubeConfigError(_none_found(default))
    return default


def _none_found(kubeconfig: str) -> str:
    if os.environ.get("KUBECONFIG"):
        tried = [str(Path(p).expanduser()) for p in kubeconfig.split(os.pathsep) if p]
        none = "which does not exist" if len(tried) == 1 else "none of which exists"
        return f"no kubeconfig found: KUBECONFIG names {', '.join(tried)}, {none} (give --kubeconfig FILE, or run in a pod)"
    return (
        f"no kubeconfig found: {Path(DEFAULT_KUBECONFIG).expanduser()} does not exist and KUBECONFIG is not set "
        "(give --kubeconfig FILE, set KUBECONFIG, or run in a pod)"
    )


def own_namespace(kubeconfig: Path | None, context: str | None = None) -> str:
    """The namespace this process runs in: the service account's in a pod, else the kubeconfig
    context's (``context``, or the current one), else ``default``, as kubectl picks it."""
    if in_cluster() and not context and SERVICE_ACCOUNT_NAMESPACE.is_file():
        return SERVICE_ACCOUNT_NAMESPACE.read_text().strip()
    return _context_namespace(kubeconfig, context)


def _context_namespace(kubeconfig: Path | None, context: str | None) -> str:
    try:
        contexts, active = config.list_kube_config_contexts(config_file=str(kubeconfig) if kubeconfig else default_kubeconfig())
    except Exception:  # noqa: BLE001 - no usable context: the default namespace
        return "default"
    chosen = next((c for c in contexts if c.get("name") == context), None) if context else active
    return str((chosen or {}).get("context", {}).get("namespace") or "default")
