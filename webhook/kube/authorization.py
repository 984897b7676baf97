"""Whether a user may get a ResourceClaimTemplate, as the API server's authorizers answer a
SubjectAccessReview (DECISIONS.md §3.1): the core's ``TemplateAccess``. A question is asked on
threads of its own (a slow API server holds those, not the PodCliqueSet cache's), answered within
``timeout`` or not at all (``AccessUnknown``), and once however many wait for it; an answer is kept
per user and template, a permission longer than a refusal.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import urllib3
from cachetools import TLRUCache
from kubernetes import client

from webhook.core.pcs.authorization import REVIEW_RESULTS, AccessUnknown, User
from webhook.kube.api import (
    CONNECTION_ERRORS, RESOURCECLAIMTEMPLATES, SUBJECTACCESSREVIEWS, Objects, connection_problem, status_message,
)

log = logging.getLogger(__name__)

Key = tuple[User, str, str]


def review_body(user: User, namespace: str, name: str) -> dict[str, Any]:
    """The SubjectAccessReview: may ``user`` get that ResourceClaimTemplate."""
    attributes = {"namespace": namespace, "verb": "get", "group": RESOURCECLAIMTEMPLATES.group,
                  "resource": RESOURCECLAIMTEMPLATES.plural, "name": name}
    spec: dict[str, Any] = {"resourceAttributes": attributes, "user": user.username, "groups": list(user.groups)}
    if user.uid:
        spec["uid"] = user.uid
    if user.extra:
        spec["extra"] = {key: list(values) for key, values in user.extra}
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}


def _timed_out(err: BaseException) -> bool:
    """urllib3's own timeout, which may come a moment before the event loop's."""
    if isinstance(err, urllib3.exceptions.MaxRetryError) and err.reason is not None:
        return _timed_out(err.reason)
    new_connection = urllib3.exceptions.NewConnectionError  # a refusal, though a ConnectTimeoutError subclass
    return isinstance(err, urllib3.exceptions.TimeoutError) and not isinstance(err, new_connection)


class SubjectAccessReviews:
    """``TemplateAccess`` through SubjectAccessReviews. ``api`` must send each request once (no
    urllib3 retries), so that ``timeout`` bounds the review whatever happens."""

    def __init__(
        self, api: client.ApiClient, *, timeout: float = 2.0, allowed_ttl: float = 5.0, denied_ttl: float = 2.0,
        size: int = 4096, workers: int = 8, clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._reviews = Objects(api, SUBJECTACCESSREVIEWS, timeout=timeout)
        self.timeout = timeout
        self.allowed_ttl = allowed_ttl
        self.denied_ttl = denied_ttl
        self.answers: TLRUCache[Key, bool] = TLRUCache(size, self._kept_until, clock)
        self._asking: dict[Key, asyncio.Future[bool]] = {}
        self.results: dict[str, int] = dict.fromkeys(REVIEW_RESULTS, 0)
        """Reviews made (not answers remembered), by result, for metrics: counted on the event loop."""
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="subjectaccessreview")

    def known(self, user: User, namespace: str, name: str) -> bool | None:
        return self.answers.get((user, namespace, name))

    def _kept_until(self, _key: Key, allowed: bool, now: float) -> float:
        return now + (self.allowed_ttl if allowed else self.denied_ttl)

    async def may_get(self, user: User, namespace: str, name: str) -> bool:
        """The answer remembered, else that of the one review for the key however many ask at once;
        an asker cancelled leaves it to the others. Only the event loop uses the answers: no lock."""
        key = (user, namespace, name)
        known = self.known(*key)
        if known is not None:
            return known
        asking = self._asking.get(key)
        if asking is None:
            asking = self._asking[key] = asyncio.ensure_future(self._review(key))
            asking.add_done_callback(lambda done: self._asked(key, done))
        return await asyncio.shield(asking)

    def _asked(self, key: Key, done: asyncio.Future[bool]) -> None:
        del self._asking[key]
        if not done.cancelled():
            done.exception()  # retrieved here: every asker may have gone (their requests cut off)

    async def _review(self, key: Key) -> bool:
        user, namespace, name = key
        late = f"the API server did not answer within {self.timeout:g} s"
        try:
            allowed = await asyncio.wait_for(asyncio.get_running_loop().run_in_executor(self._executor, self._ask, key), self.timeout)
        except TimeoutError:
            problem = late
        except client.ApiException as err:
            problem = connection_problem(err) if err.status == 0 else f"API error {err.status}: {status_message(err)}"
        except CONNECTION_ERRORS as err:
            problem = late if _timed_out(err) else connection_problem(err)
        except ValueError as err:  # an answer that is not a SubjectAccessReview
            problem = f"unreadable answer from the API server: {str(err).splitlines()[0]}"
        else:
            self.results["allowed" if allowed else "denied"] += 1
            self.answers[key] = allowed
            return allowed
        self.results["error"] += 1
        log.warning("SubjectAccessReview failed (may user %r get ResourceClaimTemplate %s/%s): %s", user.username, namespace, name, problem)
        raise AccessUnknown(problem)

    def _ask(self, key: Key) -> bool:
        answer = self._reviews.create(review_body(*key))
        status = answer.get("status") if isinstance(answer, dict) else None
        return isinstance(status, dict) and status.get("allowed") is True

    def close(self, wait: bool = False) -> None:
        """Stops the threads; reviews under way end within ``timeout`` (``wait``: waits for them)."""
        self._executor.shutdown(wait=wait, cancel_futures=True)
