"""The messages of the Events that report created, adopted and deleted claims."""

from __future__ import annotations

import pytest

from webhook.reconciler.sync.reconcile import event_message


@pytest.mark.parametrize(
    ("verb", "names", "message"),
    [
        ("Created", ["rs-test-all-int-tpl5"], "Created ResourceClaim rs-test-all-int-tpl5"),
        ("Deleted stale", ["a-1-x", "a-2-x"], "Deleted stale 2 ResourceClaims: a-1-x, a-2-x"),
        (
            "Created",
            [f"rs-test-0-sga-{j}-int-tpl3" for j in range(100)],
            "Created 100 ResourceClaims: "
            + ", ".join(f"rs-test-0-sga-{j}-int-tpl3" for j in range(32))
            + " and 68 more",
        ),
    ],
    ids=["one", "several", "too-many-to-name"],
)
def test_event_message(verb: str, names: list[str], message: str) -> None:
    assert event_message(verb, names) == message
    assert len(event_message(verb, names)) <= 1024
