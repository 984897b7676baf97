"""The failure every command reports the same way: one line on stderr and a non-zero exit."""

from __future__ import annotations

USAGE_EXIT = 2
"""The exit code of a usage mistake (an unknown option, a bad value), as argparse's."""


class CommandError(Exception):
    """A failure the user can act on; its message is one line, never a traceback."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code

    def line(self) -> str:
        """The message on one line, whatever it quotes (a label key with a line break, say)."""
        return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in str(self))
