"""What ``status`` finds wrong, one ``Finding`` each, gathered in a ``Report`` per PodCliqueSet."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum



@dataclass(frozen=True, slots=True)
class EventText:
    """An Event as ``kubectl describe`` shows one: type, reason, how often, message."""

    type: str
    reason: str
    message: str
    count: int
    last: str
    """When it was last seen (RFC 3339), as the API server wrote it."""

    def __str__(self) -> str:
        times = f" (x{self.count})" if self.count > 1 else ""
        return f"{self.type} {self.reason}{times} at {self.last}: {self.message}"


class Problem(StrEnum):
    """What a finding is about; ``-o json`` carries it for scripts."""

    DENIED = "Denied"
    CLAIM_MISSING = "ClaimMissing"
    OVER_LIMIT = "OwnerOverLimit"
    CLAIM_STALE = "ClaimStale"
    CLAIM_NOT_GROVES = "ClaimNotGroves"
    POD_MISSING_CLAIMS = "PodMissingClaims"
    POD_UNPLACED = "PodUnplaced"
    CLAIM_NOT_FOUND = "PodWaitsForMissingClaim"
    CLAIM_UNALLOCATED = "ClaimNotAllocated"


@dataclass(frozen=True, slots=True)
class Finding:
    problem: Problem
    subject: str
    """The object it is about, ``Kind namespace/name``."""
    message: str
    event: EventText | None = None
    """The last Warning Event on the claim's owner, when the reconciler wrote one."""


@dataclass(frozen=True, slots=True)
class Report:
    """One PodCliqueSet: its counts, what is wrong, and the webhook's warnings (which alone are
    not wrong: a workload can run with them)."""

    namespace: str
    name: str
    claims: int
    present: int
    pods: int
    findings: list[Finding] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        return not self.findings
