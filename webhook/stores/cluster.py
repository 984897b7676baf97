"""The cluster object store: a list+watch cache of ``grove.io/v1alpha1`` PodCliqueSets, one
informer per watched namespace (or one for all) kept in memory from a background thread.

A miss can be an object the watch has not delivered yet (a PodCliqueSet created a moment before
its first pod), so ``fetch`` makes one GET bounded by ``fetch_timeout``, off the event loop, through
a client without urllib3's retries: by default a timed-out GET is sent four times, which would make
the bound four times what it says. The validating webhook's SubjectAccessReviews and template GETs
go through that client too.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from kubernetes import client
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import HTTPError

from webhook.core.model.podcliqueset import PodCliqueSet, read_without_templates
from webhook.kube.access import Access, Component, GuardedApiClient, KubeConfigError, api_client, guarded
from webhook.kube.api import NOT_FOUND, PODCLIQUESETS, Objects
from webhook.kube.authorization import SubjectAccessReviews
from webhook.kube.informer import Informer, Informers
from webhook.kube.templates import TemplateReads
from webhook.stores import StoreError

log = logging.getLogger(__name__)


def _single_attempt(api: GuardedApiClient) -> GuardedApiClient:
    """A client like ``api`` whose requests are sent once, so a timeout bounds the whole call."""
    configuration = copy.deepcopy(api.configuration)
    configuration.retries = False
    # The proxy as found now (the environment's, or none), kept: otherwise the token-refresh hook,
    # which sets the host again before every request, makes the client re-read every environment
    # variable for it (more in a pod with many service variables).
    configuration.proxy = configuration.proxy
    return GuardedApiClient(configuration, api.access)


class ClusterStore:
    def __init__(
        self,
        kubeconfig: Path | None = None,
        namespaces: Sequence[str] = (),
        *,
        context: str | None = None,
        api: client.ApiClient | None = None,
        fetch_timeout: float = 2.0,
        watch_timeout_seconds: int = 300,
    ) -> None:
        self.kubeconfig, self.context = kubeconfig, context
        self.namespaces = list(dict.fromkeys(namespaces))
        self.fetch_timeout = fetch_timeout
        self.watch_timeout_seconds = watch_timeout_seconds
        self._api = api
        self._client: GuardedApiClient | None = None
        """``api`` guarded, its requests sent once: the reads of the request path go through it."""
        self._reviews: SubjectAccessReviews | None = None
        self._templates: TemplateReads | None = None
        self._informers: Informers[PodCliqueSet] | None = None

    @property
    def access(self) -> Access:
        """What the store has sent so far, by the access table's terms."""
        assert isinstance(self._api, GuardedApiClient), "the store has not started"
        return self._api.access

    @property
    def ready(self) -> bool:
        return self._informers is not None and self._informers.synced

    @property
    def size(self) -> int:
        return 0 if self._informers is None else len(self._informers)

    def get(self, namespace: str, name: str) -> PodCliqueSet | None:
        return None if self._informers is None else self._informers.get(namespace, name)

    async def fetch(self, namespace: str, name: str) -> PodCliqueSet | None:
        """None outside the watched namespaces, and for an empty name, whose URL would be the
        namespace's list."""
        watched = not self.namespaces or namespace in self.namespaces
        if self._client is None or not name or not watched:
            return None
        try:
            obj = await asyncio.to_thread(Objects(self._client, PODCLIQUESETS, namespace, self.fetch_timeout).get, name)
        except ApiException as err:
            if err.status != NOT_FOUND:
                log.warning("GET of PodCliqueSet %s/%s failed: %s %s", namespace, name, err.status, err.reason)
            return None
        except (HTTPError, OSError) as err:
            log.warning("GET of PodCliqueSet %s/%s failed: %s", namespace, name, err)
            return None
        try:
            return read_without_templates(obj)
        except ValueError as err:
            log.warning("PodCliqueSet %s/%s cannot be read: %s", namespace, name, str(err).splitlines()[0])
            return None

    def template_access(self) -> SubjectAccessReviews:
        """One per store, made once started."""
        assert self._client is not None, "the store has not started"
        if self._reviews is None:
            self._reviews = SubjectAccessReviews(self._client)
        return self._reviews

    def template_lookup(self) -> TemplateReads:
        assert self._templates is not None, "the store has not started"
        return self._templates

    def template_reviews(self) -> Mapping[str, int]:
        return {} if self._reviews is None else self._reviews.results

    async def start(self) -> None:
        if self._api is None:
            try:
                self._api = api_client(str(self.kubeconfig) if self.kubeconfig else None, self.context)
            except KubeConfigError as err:
                raise StoreError(str(err)) from None
        # Every call is checked against the webhook's access table, from which the chart's RBAC is written.
        api = self._api = guarded(self._api, Component.WEBHOOK)
        self._client = _single_attempt(api)
        self._templates = TemplateReads(self._client, self.fetch_timeout)
        # Each PodCliqueSet is read without its templates as it arrives: requests never parse one, the
        # rest (pod specs above all) is dropped at once, and one that cannot be read is logged, left out.
        self._informers = Informers(PODCLIQUESETS, self.namespaces, lambda namespace: Informer(
            api, PODCLIQUESETS, namespace=namespace, transform=read_without_templates, watch_timeout_seconds=self.watch_timeout_seconds
        ))
        self._informers.start()

    async def stop(self) -> None:
        informers = [] if self._informers is None else list(self._informers)
        await asyncio.gather(*(asyncio.to_thread(i.stop) for i in informers))
        if self._reviews is not None:
            self._reviews.close()
            self._reviews = None
        if self._client is not None:
            self._client.close()
            self._client = None
