"""A release installed by the README's commands for one test module, and whatever a failed test
left of it removed afterwards, so that the next module finds an empty cluster."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from kubernetes import client

from node import checks, readme
from node.pods import NAMESPACE
from node.readme import Shell


@contextmanager
def installed(shell: Shell, admin: client.ApiClient, mode: str, *values: str) -> Iterator[None]:
    commands = readme.install(mode)
    shell(readme.with_values(commands, *values) if values else commands)
    try:
        yield
    finally:
        core = client.CoreV1Api(admin)
        left = checks.release_objects(admin) or [n for n in core.list_namespace().items if n.metadata.name == NAMESPACE]
        if left:
            checks.force_cleanup(shell, admin)
        checks.remove_demo(admin)
