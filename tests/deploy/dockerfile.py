"""Reading the Dockerfile and .dockerignore as Docker does, for the few forms this repository uses."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path


@dataclass(frozen=True)
class Instruction:
    keyword: str
    arguments: str

    @property
    def exec_form(self) -> list[str]:
        """The JSON array of ``ENTRYPOINT ["a", "b"]``; ValueError for the shell form."""
        parsed = json.loads(self.arguments)
        if not isinstance(parsed, list):
            raise ValueError(f"{self.keyword} {self.arguments} is not in exec form")
        return parsed


@dataclass(frozen=True)
class Dockerfile:
    path: Path

    @cached_property
    def instructions(self) -> list[Instruction]:
        """Continuation lines joined, comments and blank lines dropped."""
        logical, pending = [], ""
        for line in self.path.read_text().splitlines():
            if not pending and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            logical.append(pending + line)
            pending = ""
        found = []
        for line in logical:
            keyword, _, arguments = line.strip().partition(" ")
            found.append(Instruction(keyword.upper(), arguments.strip()))
        return found

    @property
    def stages(self) -> list[list[Instruction]]:
        """The instructions of each stage, each starting with its FROM."""
        stages: list[list[Instruction]] = []
        for instruction in self.instructions:
            if instruction.keyword == "FROM":
                stages.append([])
            if stages:
                stages[-1].append(instruction)
        return stages

    def args(self) -> dict[str, str]:
        """Defaults of the ARGs declared before the first FROM."""
        declared = {}
        for instruction in self.instructions:
            if instruction.keyword == "FROM":
                break
            if instruction.keyword == "ARG":
                name, _, default = instruction.arguments.partition("=")
                declared[name] = default
        return declared

    def base_image(self, stage: list[Instruction]) -> str:
        image = stage[0].arguments.split()[0]
        return re.sub(r"\$\{(\w+)\}", lambda m: self.args()[m.group(1)], image)


@dataclass(frozen=True)
class DockerIgnore:
    """The build context's filter: the last pattern that matches a path or one of its parent
    directories decides, ``!`` re-includes, ``*`` stays within a path segment and ``**`` does not."""

    path: Path

    @cached_property
    def patterns(self) -> list[tuple[re.Pattern[str], bool]]:
        compiled = []
        for line in self.path.read_text().splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            include = line.startswith("!")
            pattern = line.lstrip("!").strip("/")
            compiled.append((re.compile(_regex(pattern)), include))
        return compiled

    def sends(self, relative: str) -> bool:
        """Whether the file at ``relative`` reaches the build context."""
        parts = relative.split("/")
        candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        sent = True
        for regex, include in self.patterns:
            if any(regex.fullmatch(candidate) for candidate in candidates):
                sent = include
        return sent


def _regex(pattern: str) -> str:
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return out
