"""`FakeApiServer`: the fake Kubernetes API on a loopback port, plus test hooks.

Uvicorn runs the Starlette app in a daemon thread on a socket bound before the
thread starts, so the port is known at once and a failed start raises here.
Tests reach it through the official client and a kubeconfig
(`write_kubeconfig`), and reach around it through the hooks: direct store
access for setup and assertions (`create`, `get`, `list`, `patch`, `replace`,
`delete`), the request log (`requests`), fault injection (`fail_next`,
`hold_next`), SubjectAccessReview answers (`authorization`: grants, a policy,
the reviews asked) and watch control (`compact`, `expire_watches`, `delay_watch`). Hooks emit watch
events exactly as API writes do, but are not logged as requests.
"""

from __future__ import annotations

import asyncio
import copy
import socket
import threading
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType
from typing import Any

import uvicorn

from .app import ApiApp
from .authorization import Authorizer
from .faults import Fault, FaultInjector
from .kubeconfig import new_api_client, write_kubeconfig
from .patching import JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH
from .requestlog import RequestLog
from .resources import DEFAULT_RESOURCES, Registry, ResourceType
from .selectors import FieldSelector, LabelSelector
from .store import Store

Obj = dict[str, Any]
_PATCH_TYPES = {"merge": MERGE_PATCH, "json": JSON_PATCH, "strategic": STRATEGIC_MERGE_PATCH}


class _ThreadServer(uvicorn.Server):
    """Uvicorn that says when it is listening (it skips signal handlers off the main thread)."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()
        self.loop: asyncio.AbstractEventLoop | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self.loop = asyncio.get_running_loop()
        await super().startup(sockets)
        self.ready.set()


class FakeApiServer:
    """A Kubernetes-API-compatible server on 127.0.0.1, started on construction."""

    def __init__(self, resources: Iterable[ResourceType] = DEFAULT_RESOURCES, *,
                 history_limit: int = 10_000, start_timeout: float = 10.0) -> None:
        self.registry = Registry(resources)
        self.store = Store(self.registry, history_limit)
        self.requests = RequestLog()
        self.faults = FaultInjector()
        self.authorization = Authorizer()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(128)
        self.host, self.port = self._sock.getsockname()[:2]
        self.url = f"http://{self.host}:{self.port}"
        app = ApiApp(self.store, self.requests, self.faults, lambda: f"{self.host}:{self.port}",
                     self.authorization).build()
        config = uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False,
                                ws="none", timeout_graceful_shutdown=2)
        self._server = _ThreadServer(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]},
                                        name=f"fakeapi-{self.port}", daemon=True)
        self._stopped = False
        self._thread.start()
        if not self._server.ready.wait(start_timeout):
            self.stop()
            raise RuntimeError(f"fake API server did not start within {start_timeout}s")

    # ---- lifecycle -------------------------------------------------------
    def stop(self, timeout: float = 5.0) -> None:
        """End open watch streams, shut uvicorn down and wait for its thread."""
        if self._stopped:
            return
        self._stopped = True
        self.faults.clear()
        self.store.expire_watches()
        self._server.should_exit = True
        self._thread.join(timeout)
        self._sock.close()

    def __enter__(self) -> FakeApiServer:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def reset(self) -> None:
        """Forget all objects, history, watches, faults, logged requests and authorization grants
        and reviews (the RV keeps counting)."""
        self.store.clear()
        self.store.hub.delays.clear()
        self.faults.clear()
        self.requests.reset()
        self.authorization.clear()

    def register(self, rt: ResourceType) -> None:
        """Serve one more resource from now on."""
        self.registry.register(rt)

    # ---- clients ---------------------------------------------------------
    def write_kubeconfig(self, path: str | Path, namespace: str = "default") -> Path:
        return write_kubeconfig(self.url, path, namespace)

    def api_client(self, kubeconfig_path: str | Path) -> Any:
        """Write a kubeconfig at `kubeconfig_path` and return an ``ApiClient`` loaded from it."""
        return new_api_client(self.write_kubeconfig(kubeconfig_path))

    # ---- direct store access ---------------------------------------------
    @property
    def resource_version(self) -> int:
        """The latest resourceVersion handed out."""
        return self.store.resource_version

    def resolve(self, resource: ResourceType | str) -> ResourceType:
        return self.registry.resolve(resource)

    def _kind_of(self, obj: Obj) -> ResourceType:
        rt = self.registry.by_kind(obj.get("apiVersion", ""), obj.get("kind", ""))
        if rt is None:
            raise ValueError(f"no resource serves apiVersion={obj.get('apiVersion')!r} kind={obj.get('kind')!r}")
        return rt

    def create(self, obj: Obj, namespace: str | None = None) -> Obj:
        """Store an object as given (status and a preset uid kept), as if the API created it."""
        meta = obj.get("metadata") or {}
        return copy.deepcopy(self.store.create(self._kind_of(obj), namespace or meta.get("namespace"),
                                               obj, api=False))

    def get(self, resource: ResourceType | str, namespace: str | None, name: str) -> Obj | None:
        """The stored object, or None when there is none."""
        rt = self.resolve(resource)
        with self.store.lock:
            found = self.store.find(rt, namespace, name)
            return copy.deepcopy(found) if found is not None else None

    def list(self, resource: ResourceType | str, namespace: str | None = None,
             label_selector: str | None = None, field_selector: str | None = None) -> list[Obj]:
        rt = self.resolve(resource)
        items, _ = self.store.list_objects(rt, namespace, LabelSelector.parse(label_selector),
                                   FieldSelector.parse(field_selector, rt.field_labels))
        return copy.deepcopy(items)

    def count(self, resource: ResourceType | str, namespace: str | None = None,
              label_selector: str | None = None) -> int:
        """How many objects `list` would return, without copying them (cheap at 200,000)."""
        rt = self.resolve(resource)
        labels = LabelSelector.parse(label_selector)
        with self.store.lock:
            objects = self.store.objects(rt)
            return sum(1 for (ns, _), obj in objects.items()
                       if (namespace is None or ns == namespace) and labels.matches(obj))

    def replace(self, obj: Obj, subresource: str | None = None) -> Obj:
        """PUT semantics (409 on a stale resourceVersion) without the API's status rules."""
        meta = obj.get("metadata") or {}
        return copy.deepcopy(self.store.update(self._kind_of(obj), meta.get("namespace"), meta.get("name", ""),
                                               obj, subresource=subresource, api=False))

    def patch(self, resource: ResourceType | str, namespace: str | None, name: str, patch: Any,
              patch_type: str = "merge", subresource: str | None = None) -> Obj:
        """Patch with ``merge``, ``strategic`` or ``json`` semantics; may set status."""
        return copy.deepcopy(self.store.patch(self.resolve(resource), namespace, name, patch,
                                              _PATCH_TYPES[patch_type], subresource=subresource, api=False))

    def delete(self, resource: ResourceType | str, namespace: str | None, name: str,
               propagation_policy: str = "Background") -> Obj | None:
        """Delete like the API (finalizers, garbage collection); None if it did not exist."""
        rt = self.resolve(resource)
        with self.store.lock:
            if self.store.find(rt, namespace, name) is None:
                return None
            obj, _ = self.store.delete(rt, namespace, name, {"propagationPolicy": propagation_policy})
            return copy.deepcopy(obj)

    def delete_collection(self, resource: ResourceType | str, namespace: str | None,
                          label_selector: str) -> list[str]:
        """DeleteCollection as the API does it (finalizers, garbage collection); the names deleted."""
        rt = self.resolve(resource)
        deleted = self.store.delete_collection(rt, namespace, LabelSelector.parse(label_selector), None)
        return [obj["metadata"]["name"] for obj in deleted]

    # ---- watches and faults ----------------------------------------------
    def compact(self) -> None:
        """Forget the change history: a watch resuming from any older RV now gets 410 Expired."""
        self.store.compact()

    def expire_watches(self) -> int:
        """End every open watch stream cleanly (clients reconnect); returns how many."""
        return self.store.expire_watches()

    def delay_watch(self, resource: ResourceType | str, seconds: float) -> None:
        """Deliver every later change of `resource` to open watches `seconds` late (0: at once),
        keeping their order, as a lagging watch cache would."""
        rt = self.resolve(resource)
        with self.store.lock:
            if seconds > 0:
                self.store.hub.delays[rt.key] = seconds
            else:
                self.store.hub.delays.pop(rt.key, None)

    def open_watches(self) -> int:
        with self.store.lock:
            return len(self.store.hub.watchers)

    def fail_next(self, method: str | None, path_regex: str, status: int = 500, reason: str = "InternalError",
                  times: int = 1, *, message: str | None = None, query_regex: str | None = None,
                  retry_after_seconds: int | None = None) -> Fault:
        """Answer the next `times` matching requests with a ``Status`` of `status`/`reason`."""
        return self.faults.add(method, path_regex, status, reason, times=times, message=message,
                               query_regex=query_regex, retry_after_seconds=retry_after_seconds)

    def hold_next(self, method: str | None, path_regex: str, seconds: float, times: int = 1) -> None:
        """Hold the next `times` matching requests for `seconds` before serving them."""
        self.faults.hold(method, path_regex, seconds, times=times)
