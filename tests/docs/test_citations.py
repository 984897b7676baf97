"""Every section the code and the tests cite exists: ``BEHAVIOUR.md §4.7`` (Grove's behaviour, also
what a bare ``§4.7`` means) and ``DECISIONS.md §3`` (the project's own) are files in docs/."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CITATION = re.compile(r"(?:(BEHAVIOUR|DECISIONS)\.md\s+)?§\s?(\d+(?:\.\d+)*)")


def sections(document: str) -> set[str]:
    headings = (re.match(r"#+\s+(\d+(?:\.\d+)*)\.?\s", line) for line in (ROOT / "docs" / document).read_text().splitlines())
    return {m.group(1) for m in headings if m}


def test_every_cited_section_exists() -> None:
    known = {"BEHAVIOUR": sections("BEHAVIOUR.md"), "DECISIONS": sections("DECISIONS.md")}
    sources = [p for folder in ("webhook", "tests", "bench", "examples") for p in (ROOT / folder).rglob("*.py")]
    cited, missing = 0, []
    for source in sources:
        for match in CITATION.finditer(source.read_text()):
            document, section = match.group(1) or "BEHAVIOUR", match.group(2).rstrip(".")
            cited += 1
            if section not in known[document]:
                missing.append(f"{source.relative_to(ROOT)}: {document}.md §{section}")
    assert cited > 100
    assert missing == []
