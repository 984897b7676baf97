"""The failure every command reports the same way: one line on stderr and a non-zero exit."""

from __future__ import annotations


class CommandError(Exception):
    """A failure the user can act on; its message is one line, never a traceback."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code
