"""The HTTP face of the store: a Starlette app speaking the Kubernetes REST API.

One catch-all route: every request is logged, may be answered by an injected
fault, then is parsed (`routing`) and served from the `Store`. Errors leave as
``metav1.Status`` bodies with the real codes. Watches are chunked streams of
newline-delimited JSON events, fed from the watcher's queue, that end cleanly
on ``timeoutSeconds``, when the server expires or stops them, or with a
single ERROR event when the asked-for resourceVersion is too old.

Left out, on purpose: server-side apply (``application/apply-patch+yaml`` gets
415), ``dryRun`` (refused with 400 rather than silently persisted), paging from
a consistent snapshot (``limit``/``continue`` pages by namespace/name through
the objects as they are when each page is asked for, every page saying the
first page's resourceVersion, so a watch from it sees what changed between
pages; no token ever expires), watch bookmarks and ``sendInitialEvents``
(ignored), graceful pod deletion (pods go at once, there is no kubelet),
authentication and admission. Authorization is only what a SubjectAccessReview
asks (`authorization`): every other request is served.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from . import authorization, discovery, errors
from .faults import FaultInjector
from .patching import APPLY_PATCH, JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH
from .requestlog import RequestLog
from .routing import Discovery, Target, parse
from .selectors import FieldSelector, LabelSelector
from .store import Store
from .watches import CLOSE, Watcher

_TRUE = ("1", "t", "T", "true", "TRUE", "True")  # Go's strconv.ParseBool
_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type="application/json", headers=headers)


async def _read_json(request: Request) -> Any:
    raw = await request.body()
    if not raw.strip():
        return None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise errors.bad_request(f"error decoding request body as JSON: {exc}") from None


def _int_param(request: Request, name: str) -> int | None:
    value = request.query_params.get(name)
    if value in (None, ""):
        return None
    try:
        return int(value)
    except ValueError:
        raise errors.bad_request(f"{name}: invalid integer {value!r}") from None


def _continue_token(rv: int, last: tuple[str, str]) -> str:
    return base64.urlsafe_b64encode(orjson.dumps({"rv": rv, "after": list(last)})).decode()


def _read_continue(token: str) -> tuple[int, tuple[str, str]]:
    """The resourceVersion of the first page and the key the next page starts after."""
    try:
        data = orjson.loads(base64.urlsafe_b64decode(token.encode()))
        return int(data["rv"]), (str(data["after"][0]), str(data["after"][1]))
    except (ValueError, KeyError, IndexError, TypeError):
        raise errors.bad_request(f"continue key is not valid: {token!r}") from None


class ApiApp:
    """Builds the Starlette app around a store, a request log and a fault injector."""

    def __init__(self, store: Store, log: RequestLog, faults: FaultInjector,
                 server_address: Callable[[], str], authorizer: authorization.Authorizer) -> None:
        self.store = store
        self.log = log
        self.faults = faults
        self.server_address = server_address
        self.authorizer = authorizer

    def build(self) -> Starlette:
        return Starlette(routes=[Route("/{path:path}", self.handle, methods=_METHODS)])

    async def handle(self, request: Request) -> Response:
        method, path, query = request.method, request.url.path, request.url.query
        self.log.record(method, path, query)
        if (hold := self.faults.take_hold(method, path, query)) is not None:
            await request.body()  # read (and kept) before the client may give up waiting
            await self._held(*hold)
        if (fault := self.faults.take(method, path, query)) is not None:
            return _json(fault.body(), fault.status, fault.headers())
        try:
            return await self.dispatch(request)
        except errors.ApiError as exc:
            return _json(exc.status, exc.code)

    async def _held(self, seconds: float, generation: int) -> None:
        """Wait `seconds`, or until the faults are cleared (a reset, or the server stopping)."""
        loop = asyncio.get_running_loop()
        until = loop.time() + seconds
        while loop.time() < until and not self.faults.released(generation):
            await asyncio.sleep(min(0.05, until - loop.time()))

    async def dispatch(self, request: Request) -> Response:
        path = request.url.path
        if path == "/version":
            return _json(discovery.VERSION_INFO)
        if path in ("/healthz", "/livez", "/readyz"):
            return PlainTextResponse("ok")
        if path == authorization.PATH:
            if request.method != "POST":
                raise errors.method_not_allowed()
            return _json(self.authorizer.review(await _read_json(request)), 201)
        target = parse(self.store.registry, path)
        if isinstance(target, Discovery):
            return self.discovery(target, request.method)
        if request.method != "GET" and "dryRun" in request.query_params:
            raise errors.bad_request("dryRun is not supported by the fake API server")
        verb = self._verb(request.method, target, request)
        if verb not in target.rt.verbs:
            raise errors.method_not_allowed()
        return await getattr(self, f"do_{verb}")(request, target)

    @staticmethod
    def _verb(method: str, target: Target, request: Request) -> str:
        collection = target.name is None
        if method == "GET":
            if collection:
                watching = target.watch_path or request.query_params.get("watch") in _TRUE
                return "watch" if watching else "list"
            return "get"
        if target.watch_path:
            raise errors.method_not_allowed()
        verb = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}[method]
        if verb == "delete" and collection:
            return "deletecollection"
        if collection != (verb == "create") or (verb == "create" and target.rt.namespaced and target.namespace is None):
            raise errors.method_not_allowed()
        return verb

    def discovery(self, target: Discovery, method: str) -> Response:
        if method != "GET":
            raise errors.method_not_allowed()
        registry = self.store.registry
        doc = {
            "api": lambda: discovery.api_versions(self.server_address()),
            "apis": lambda: discovery.api_group_list(registry),
            "group": lambda: discovery.api_group(registry, target.group),
            "resources": lambda: discovery.api_resource_list(registry, target.group, target.version),
        }[target.kind]()
        if doc is None:
            raise errors.unknown_resource()
        return _json(doc)

    def _selectors(self, request: Request, target: Target) -> tuple[LabelSelector, FieldSelector]:
        try:
            return (LabelSelector.parse(request.query_params.get("labelSelector")),
                    FieldSelector.parse(request.query_params.get("fieldSelector"), target.rt.field_labels))
        except ValueError as exc:
            raise errors.bad_request(str(exc)) from None

    # ---- verbs -----------------------------------------------------------
    async def do_get(self, request: Request, t: Target) -> Response:
        return _json(self.store.get(t.rt, t.namespace, t.name or ""))

    async def do_list(self, request: Request, t: Target) -> Response:
        labels, fields = self._selectors(request, t)
        limit, token = _int_param(request, "limit"), request.query_params.get("continue")
        if not limit and not token:
            items, rv = self.store.list_objects(t.rt, t.namespace, labels, fields)
            return _json({"kind": t.rt.list_kind, "apiVersion": t.rt.api_version,
                          "metadata": {"resourceVersion": str(rv)}, "items": items})
        rv, after = _read_continue(token) if token else (self.store.resource_version, None)
        items, last = self.store.list_page(t.rt, t.namespace, labels, fields, limit or 500, after)
        metadata: dict[str, Any] = {"resourceVersion": str(rv)}
        if last is not None:
            metadata["continue"] = _continue_token(rv, last)
        return _json({"kind": t.rt.list_kind, "apiVersion": t.rt.api_version, "metadata": metadata, "items": items})

    async def do_create(self, request: Request, t: Target) -> Response:
        return _json(self.store.create(t.rt, t.namespace, await _read_json(request)), 201)

    async def do_update(self, request: Request, t: Target) -> Response:
        body = await _read_json(request)
        return _json(self.store.update(t.rt, t.namespace, t.name or "", body, subresource=t.subresource))

    async def do_patch(self, request: Request, t: Target) -> Response:
        content_type = (request.headers.get("content-type") or "").split(";", 1)[0].strip().lower()
        accepted = [JSON_PATCH, MERGE_PATCH] + ([] if t.rt.crd else [STRATEGIC_MERGE_PATCH])
        if content_type not in accepted:
            # Server-side apply (APPLY_PATCH) is real but not faked here.
            raise errors.unsupported_media_type(content_type, accepted + [APPLY_PATCH])
        body = await _read_json(request)
        return _json(self.store.patch(t.rt, t.namespace, t.name or "", body, content_type,
                                      subresource=t.subresource))

    async def _delete_options(self, request: Request) -> dict[str, Any]:
        options = await _read_json(request) or {}
        if not isinstance(options, dict):
            raise errors.bad_request("DeleteOptions must be an object")
        for name in ("propagationPolicy", "gracePeriodSeconds"):
            if (value := request.query_params.get(name)) is not None:
                options[name] = value
        if (orphan := request.query_params.get("orphanDependents")) is not None:
            options["orphanDependents"] = orphan in _TRUE
        return options

    async def do_delete(self, request: Request, t: Target) -> Response:
        obj, removed = self.store.delete(t.rt, t.namespace, t.name or "", await self._delete_options(request))
        if removed and not t.rt.returns_deleted_object:
            details = {"name": t.name, **({"group": t.rt.group} if t.rt.group else {}),
                       "kind": t.rt.plural, "uid": obj["metadata"]["uid"]}
            return _json({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                          "details": details})
        return _json(obj)

    async def do_deletecollection(self, request: Request, t: Target) -> Response:
        labels, fields = self._selectors(request, t)
        deleted = self.store.delete_collection(t.rt, t.namespace, labels, fields,
                                               await self._delete_options(request))
        return _json({"kind": t.rt.list_kind, "apiVersion": t.rt.api_version,
                      "metadata": {"resourceVersion": str(self.store.resource_version)}, "items": deleted})

    async def do_watch(self, request: Request, t: Target) -> Response:
        labels, fields = self._selectors(request, t)
        timeout = _int_param(request, "timeoutSeconds")
        initial, watcher = self.store.open_watch(t.rt, t.namespace, labels, fields,
                                                 request.query_params.get("resourceVersion"),
                                                 asyncio.get_running_loop())
        return StreamingResponse(self._stream(initial, watcher, timeout), media_type="application/json")

    async def _stream(self, initial: list[bytes], watcher: Watcher | None,
                      timeout: int | None) -> AsyncIterator[bytes]:
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        try:
            for event in initial:
                yield event
            while watcher is not None:
                remaining = None if deadline is None else deadline - loop.time()
                if remaining is not None and remaining <= 0:
                    return
                try:
                    item = await asyncio.wait_for(watcher.queue.get(), remaining)
                except TimeoutError:
                    return
                if item is CLOSE:
                    return
                yield item
        finally:
            if watcher is not None:
                self.store.close_watch(watcher)
