"""What one reconcile of a PodCliqueSet did, owner by owner, and how it may end early.

A reconcile works within a budget: once it has written claims for ``BUDGET`` seconds it stops
between two chunks and says so (``Outcome.partial``), and the PodCliqueSet goes to the back of the
queue, so one owner of a million claims never holds a worker for long and every other
PodCliqueSet waiting gets its turn first. ``Outcome`` is controller-runtime's ``Result``: done,
retry (``failed``, ``retry_within``), or come back later (``partial``, ``requeue_after``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from kubernetes.client.exceptions import ApiException

from webhook.core.sharing.owners import Owner
from webhook.kube.apierrors import status_message
from webhook.kube.connection import connection_problem, is_connection_error
from webhook.reconciler.cluster.liveowners import LiveOwners
from webhook.reconciler.sync import events
from webhook.reconciler.sync.stale import StaleCandidates
from webhook.reconciler.sync.templates import Templates

BUDGET = 1.0
"""Seconds a reconcile goes on writing before it yields to the PodCliqueSets waiting."""
FAILURES_KEPT = 20
"""Failure messages kept per owner (the rest are counted)."""


class Interrupted(Exception):
    """Shutdown or a lost lease: stop before the next write (the one under way has finished)."""


class Unreachable(Exception):
    """The API server did not answer: the reconcile stops at once and is retried (nothing to
    report on the owners, and an Event could not be written anyway)."""


class OwnerFailure(Exception):
    """One claim of one owner could not be made as desired; reported on the owner."""

    def __init__(self, message: str, reason: str = events.SYNC_FAILED) -> None:
        super().__init__(message)
        self.reason = reason


def api_failure(err: Exception, claim: str, verb: str = "") -> OwnerFailure:
    """The failure an exception of a claim write or read means, or ``Unreachable`` raised."""
    if is_connection_error(err):
        raise Unreachable(connection_problem(err)) from None
    if isinstance(err, ApiException):
        return OwnerFailure(f'{verb}RC "{claim}": {status_message(err)}')
    raise err


@dataclass(slots=True)
class OwnerWork:
    """What one owner's part of a reconcile did."""

    owner: Owner
    created: list[str] = field(default_factory=list)
    adopted: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    failures: list[OwnerFailure] = field(default_factory=list)
    failed: int = 0
    complete: bool = True
    """Every claim of the owner up to the limit is as desired (cleanup may follow)."""

    def fail(self, failure: OwnerFailure) -> None:
        self.complete = False
        self.failed += 1
        if len(self.failures) < FAILURES_KEPT:
            self.failures.append(failure)

    @property
    def wrote(self) -> bool:
        return bool(self.created or self.adopted or self.deleted)


@dataclass(slots=True)
class Outcome:
    """What one reconcile did; ``failed`` says whether the key must be retried."""

    created: list[str] = field(default_factory=list)
    adopted: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    failed: int = 0
    requeue_after: float = 0.0
    """Seconds after which to reconcile again, though nothing failed (claims deleted a moment ago
    are re-created only once their owners' deletions, if any, have reached the caches)."""
    retry_within: float | None = None
    """Retry the failures within this many seconds whatever the backoff says (a missing template
    may be created any moment)."""
    partial: bool = False
    """The budget ran out with work left: run again once the PodCliqueSets waiting have run."""

    @property
    def ok(self) -> bool:
        return not self.failed

    def add(self, work: OwnerWork) -> None:
        self.created += work.created
        self.adopted += work.adopted
        self.deleted += work.deleted
        self.failed += work.failed
        room = FAILURES_KEPT - len(self.failures)
        self.failures += [f"{work.owner.name}: {f}" for f in work.failures[: max(room, 0)]]


@dataclass(slots=True)
class Pass:
    """One reconcile of one PodCliqueSet: what its owners share."""

    namespace: str
    templates: Templates
    live: LiveOwners
    outcome: Outcome
    started: float = field(default_factory=time.monotonic)
    budget: float = BUDGET
    wrote: bool = False
    candidates: StaleCandidates | None = None
    """The PodCliqueSet's cached claims that may be stale, grouped when the first owner needs them."""

    def spent(self) -> bool:
        """Claims were written and the budget is gone: time to yield. A reconcile that wrote
        nothing yet goes on, so that each one gets somewhere."""
        return self.wrote and time.monotonic() - self.started >= self.budget
