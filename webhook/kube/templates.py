"""Whether a ResourceClaimTemplate exists, as one GET answers it: the core's ``TemplateLookup``
(DECISIONS.md §3.4), for the validating webhook's warning about templates that are not there.

A PodCliqueSet CREATE names a few templates at most, and CREATEs are rare next to pod creations,
so nothing is remembered: each question is one GET, sent once (the caller's client has no urllib3
retries) and bounded by ``timeout``. What cannot be answered is None: the warning is advice, and a
slow API server must not turn into a message that a template is missing.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.kube.apierrors import NOT_FOUND
from webhook.kube.connection import CONNECTION_ERRORS, connection_problem

log = logging.getLogger(__name__)


class TemplateReads:
    def __init__(self, api: client.ApiClient, timeout: float = 2.0) -> None:
        self._api = client.ResourceV1Api(api)
        self.timeout = timeout

    async def exists(self, namespace: str, name: str) -> bool | None:
        try:
            await asyncio.wait_for(asyncio.to_thread(self._get, namespace, name), self.timeout)
        except ApiException as err:
            if err.status == NOT_FOUND:
                return False
            problem = connection_problem(err)
        except TimeoutError:
            problem = f"no answer within {self.timeout:g} s"
        except CONNECTION_ERRORS as err:
            problem = connection_problem(err)
        else:
            return True
        log.warning("GET of ResourceClaimTemplate %s/%s failed: %s", namespace, name, problem)
        return None

    def _get(self, namespace: str, name: str) -> None:
        response: Any = self._api.read_namespaced_resource_claim_template(
            name, namespace, _preload_content=False, _request_timeout=self.timeout
        )
        response.drain_conn()  # the raw urllib3 response: its body read and dropped, the connection kept
        response.release_conn()
