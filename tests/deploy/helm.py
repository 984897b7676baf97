"""Rendering the chart with Helm itself, without a cluster.

No helm binary can be installed on the machines these tests run on, but the PyPI package
``helm-sdkpy`` ships Helm's Go library (Helm v4) as a shared object. Its install action is what
``helm install`` runs: the real template engine with Sprig, ``required``, ``fail``, ``genCA``,
``lookup``, the chart's ``kubeVersion`` check and the parsing of every rendered document. It needs
an API server, so `ChartTarget` is a small one on 127.0.0.1 that answers exactly what an install
asks: the server version, discovery (so every rendered apiVersion and kind must be one it serves,
which catches a misspelt kind), an empty list of earlier releases, the creates, which it keeps,
and the GETs of ``lookup`` and of Helm's ownership checks, answered from what it keeps (so a
second install into the same target sees the first one's objects, as an upgrade does). The manifest Helm returns is what a cluster would have been sent.

The package requires Python 3.12 in its metadata but only its shared object is used, loaded
with ctypes, so it is installed with ``--no-deps --ignore-requires-python`` (see the Makefile).
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import platform
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

from fakeapi import Registry, ResourceType
from fakeapi.discovery import VERSION_INFO, api_group_list, api_resource_list, api_versions

Obj = dict[str, Any]

#: Every kind the chart may render, as discovery announces them.
CHART_KINDS: tuple[ResourceType, ...] = (
    ResourceType("", "v1", "secrets", "Secret"),
    ResourceType("", "v1", "configmaps", "ConfigMap"),
    ResourceType("", "v1", "services", "Service"),
    ResourceType("", "v1", "serviceaccounts", "ServiceAccount"),
    ResourceType("apps", "v1", "deployments", "Deployment"),
    ResourceType("batch", "v1", "jobs", "Job"),
    ResourceType("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy"),
    ResourceType("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget"),
    ResourceType("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", namespaced=False),
    ResourceType("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", namespaced=False),
    ResourceType("rbac.authorization.k8s.io", "v1", "roles", "Role"),
    ResourceType("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding"),
    ResourceType("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
                 "ValidatingWebhookConfiguration", namespaced=False),
    ResourceType("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
                 "MutatingWebhookConfiguration", namespaced=False),
    ResourceType("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies",
                 "ValidatingAdmissionPolicy", namespaced=False),
    ResourceType("admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings",
                 "ValidatingAdmissionPolicyBinding", namespaced=False),
    ResourceType("cert-manager.io", "v1", "issuers", "Issuer"),
    ResourceType("cert-manager.io", "v1", "certificates", "Certificate"),
    ResourceType("monitoring.coreos.com", "v1", "servicemonitors", "ServiceMonitor"),
    ResourceType("monitoring.coreos.com", "v1", "podmonitors", "PodMonitor"),
    ResourceType("monitoring.coreos.com", "v1", "prometheusrules", "PrometheusRule"),
)


class HelmUnavailable(Exception):
    """Helm's library is not installed, or not built for this platform."""


class HelmError(Exception):
    """Helm refused the chart; the message is Helm's."""


def library_path() -> Path:
    machine = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    spec = importlib.util.find_spec("helm_sdkpy")
    if spec is None or not spec.submodule_search_locations:
        raise HelmUnavailable("helm-sdkpy is not installed (make test installs it)")
    path = Path(spec.submodule_search_locations[0]) / "_lib" / f"linux-{machine}" / "libhelm_sdkpy.so"
    if platform.system() != "Linux" or not path.exists():
        raise HelmUnavailable(f"helm-sdkpy has no Helm library for {platform.system()} {machine}")
    return path


class ChartTarget:
    """The API server a Helm install talks to, on a loopback port, started on construction."""

    def __init__(self, version: tuple[str, str] = ("1", "34")) -> None:
        self.registry = Registry(CHART_KINDS)
        self.version = {**VERSION_INFO, "major": version[0], "minor": version[1],
                        "gitVersion": f"v{version[0]}.{version[1]}.0"}
        self.objects: dict[str, Obj] = {}
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _answer(self, method: str, path: str, body: bytes) -> tuple[int, Obj]:
        if method == "POST":
            try:
                created = json.loads(body)
            except ValueError:  # Helm's own release record, sent as protobuf: not kept
                return 201, {}
            self.objects[f"{path}/{created['metadata']['name']}"] = created
            return 201, created
        if method != "GET":  # an update of an object already here: left as it was
            return 200, self.objects.get(path, {})
        if path == "/version":
            return 200, self.version
        if path == "/api":
            return 200, api_versions(self.url)
        if path == "/apis":
            return 200, api_group_list(self.registry)
        parts = path.strip("/").split("/")
        if parts[0] == "api" and len(parts) == 2 or parts[0] == "apis" and len(parts) == 3:
            group, version = ("", parts[1]) if parts[0] == "api" else (parts[1], parts[2])
            found = api_resource_list(self.registry, group, version)
            return (200, found) if found else (404, _not_found(path))
        if path.endswith("/secrets"):  # Helm's release history: there is none
            return 200, {"kind": "SecretList", "apiVersion": "v1", "metadata": {}, "items": []}
        if path in self.objects:
            return 200, self.objects[path]
        return 404, _not_found(path)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        target = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed ACK

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _reply(self) -> None:
                sent = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, body = target._answer(self.command, self.path.partition("?")[0], sent)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _reply

        return Handler


def _not_found(path: str) -> Obj:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound",
            "code": 404, "message": f"{path} not found"}


@dataclass(frozen=True)
class Rendered:
    """The documents of one install, in Helm's order, its NOTES.txt, and its hooks (the objects
    Helm makes only at the hook's event, such as pre-delete)."""

    documents: tuple[Obj, ...]
    notes: str
    hooks: tuple[Obj, ...] = ()

    def with_hooks(self) -> Rendered:
        """The same install, its hooks among its documents."""
        return Rendered(self.documents + self.hooks, self.notes, self.hooks)

    def of_kind(self, kind: str) -> list[Obj]:
        return [doc for doc in self.documents if doc["kind"] == kind]

    def one(self, kind: str, name: str | None = None) -> Obj:
        found = [doc for doc in self.of_kind(kind) if name is None or doc["metadata"]["name"] == name]
        assert len(found) == 1, f"{len(found)} {kind} named {name or 'anything'}: {self.kinds()}"
        return found[0]

    def kinds(self) -> list[str]:
        return sorted(f"{doc['kind']}/{doc['metadata']['name']}" for doc in self.documents)

    def container(self, name: str) -> Obj:
        pod = self.one("Deployment")["spec"]["template"]["spec"]
        return next(c for c in pod["containers"] if c["name"] == name)


#: Severities of Helm's lint messages (helm.sh/helm/v4/pkg/chart/v2/lint/support).
INFO, WARNING, ERROR = 1, 2, 3


@dataclass(frozen=True)
class LintResult:
    """What Helm's lint action found: (severity, file) of each message, and how many were errors.

    The library passes each message's severity and file but not its text (Go errors encode to
    JSON as ``{}``); rendering the chart with `Helm.install` shows the text of a template error."""

    charts: int
    messages: tuple[tuple[int, str], ...]
    errors: int

    def at_least(self, severity: int) -> list[tuple[int, str]]:
        return [m for m in self.messages if m[0] >= severity]


class Helm:
    """Helm's install and lint actions, one process-wide library, with its caches kept under ``home``."""

    def __init__(self, home: Path) -> None:
        path = library_path()
        # Go reads the environment once, when the library loads.
        for variable in ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME", "KUBECACHEDIR"):
            os.environ[variable] = str(home / variable.lower())
        self.home = home
        self.lib = ctypes.CDLL(str(path))
        self.lib.helm_sdkpy_last_error.restype = ctypes.c_char_p
        self.lib.helm_sdkpy_free.argtypes = [ctypes.c_void_p]
        self.lock = threading.Lock()

    def install(self, chart: Path, values: Obj, *, release: str = "sharing", namespace: str = "grove-system",
                target: ChartTarget | None = None) -> Rendered:
        """``helm install release chart -n namespace`` with ``values`` over the chart's defaults."""
        own = target is None
        target = target or ChartTarget()
        try:
            kubeconfig = self.home / f"kubeconfig-{target.server.server_address[1]}"
            kubeconfig.write_text(yaml.safe_dump(_kubeconfig(target.url, namespace)))
            with self.lock:
                manifest, notes, hooks = self._install(kubeconfig, namespace, release, chart, values)
        finally:
            if own:
                target.stop()
        documents = tuple(doc for doc in yaml.safe_load_all(manifest) if doc)
        return Rendered(documents, notes, tuple(yaml.safe_load(hook["manifest"]) for hook in hooks))

    def lint(self, chart: Path) -> LintResult:
        """``helm lint chart``: Helm's lint action on the chart directory (its own values.yaml)."""
        kubeconfig = self.home / "kubeconfig-lint"  # never contacted: linting needs no cluster
        kubeconfig.write_text(yaml.safe_dump(_kubeconfig("http://127.0.0.1:9", "default")))
        handle = ctypes.c_ulonglong()
        with self.lock:
            self._check(self.lib.helm_sdkpy_config_create(
                b"default", str(kubeconfig).encode(), b"", b"{}", ctypes.byref(handle)))
            try:
                result = ctypes.c_void_p()
                self._check(self.lib.helm_sdkpy_lint(handle, str(chart).encode(), ctypes.byref(result)))
                try:
                    answer = json.loads(ctypes.string_at(result.value))
                finally:
                    self.lib.helm_sdkpy_free(result)
            finally:
                self.lib.helm_sdkpy_config_destroy(handle)
        messages = tuple((m["Severity"], m["Path"]) for m in answer.get("Messages") or ())
        return LintResult(answer.get("TotalChartsLinted", 0), messages, len(answer.get("Errors") or ()))

    def _install(self, kubeconfig: Path, namespace: str, release: str, chart: Path,
                 values: Obj) -> tuple[str, str, list[Obj]]:
        handle = ctypes.c_ulonglong()
        self._check(self.lib.helm_sdkpy_config_create(
            namespace.encode(), str(kubeconfig).encode(), b"", b"{}", ctypes.byref(handle)))
        try:
            result = ctypes.c_void_p()
            options = {"wait": False, "timeout_seconds": 30, "server_side_apply": "false",
                       "disable_openapi_validation": True}
            self._check(self.lib.helm_sdkpy_install(
                handle, release.encode(), str(chart).encode(), json.dumps(values).encode(), b"",
                json.dumps(options).encode(), ctypes.byref(result)))
            try:
                answer = json.loads(ctypes.string_at(result.value))
            finally:
                self.lib.helm_sdkpy_free(result)
        finally:
            self.lib.helm_sdkpy_config_destroy(handle)
        return answer.get("manifest", ""), answer.get("info", {}).get("notes", ""), answer.get("hooks") or []

    def _check(self, code: int) -> None:
        if code != 0:
            message = self.lib.helm_sdkpy_last_error()
            raise HelmError(message.decode() if message else f"Helm failed with code {code}")


def _kubeconfig(url: str, namespace: str) -> Obj:
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": "chart",
        "clusters": [{"name": "chart", "cluster": {"server": url}}],
        "users": [{"name": "chart", "user": {"token": "chart"}}],
        "contexts": [{"name": "chart", "context": {"cluster": "chart", "user": "chart", "namespace": namespace}}],
    }

