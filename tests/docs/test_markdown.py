"""The repository's Markdown: every relative link resolves, and the README stays a newcomer's page.

Links are checked as GitHub resolves them: a relative path from the file's own directory must name
a file or directory of the repository, and an ``#anchor`` into a Markdown file must be the anchor
GitHub gives one of its headings (lower case, punctuation dropped, spaces to hyphens, ``-1``,
``-2`` for repeats). Code blocks and inline code are not Markdown, so links there are not links.

The README's examples are copies of examples/README.md's, which tests/docs runs against the server.
"""

from __future__ import annotations

import os
import re
import unicodedata
from functools import cache
from pathlib import Path

import orjson
import pytest
from server.asgi import call

from webhook.server.app import create_app
from webhook.settings import ServeSettings
from webhook.stores import EmbeddedStore

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
EXAMPLES = ROOT / "examples" / "README.md"
#: Directories that hold no Markdown of the repository's own.
UNTRACKED = {"node_modules", "build", "dist", "__pycache__"}

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,}).*?^ {0,3}\1[ \t]*$", re.M | re.S)
_CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.S)
_INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
_REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$", re.M)
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$", re.M)
_HTML_ANCHOR = re.compile(r"<a\s[^>]*\b(?:name|id)=\"([^\"]+)\"", re.I)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_EXAMPLE = re.compile(r"```sh\n(?P<command>curl [^`]*?)\n```\s*```json\n(?P<output>[^`]*?)\n```")


def markdown_files() -> list[Path]:
    """Every ``*.md`` of the repository, outside hidden, generated and installed directories."""
    found = []
    for directory, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if not (d.startswith(".") or d.endswith(".egg-info") or d in UNTRACKED))
        found += [Path(directory, name) for name in sorted(files) if name.endswith(".md")]
    return found


def prose(text: str) -> str:
    """The text without fenced code blocks and code spans."""
    return _CODE_SPAN.sub("", _FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text (github-slugger), after its inline Markdown is rendered."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text stays
    text = text.lower()
    kept = (c for c in text if c in " -_" or unicodedata.category(c)[0] in "LNM")
    return "".join(kept).replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    text = path.read_text()
    seen: dict[str, int] = {}
    found = set(_HTML_ANCHOR.findall(text))
    for heading in _HEADING.findall(_FENCE.sub("", text)):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return frozenset(found)


def links(path: Path) -> list[str]:
    text = prose(path.read_text())
    return _INLINE_LINK.findall(text) + _REFERENCE.findall(text)


def broken(path: Path, target: str) -> str | None:
    """Why a link of the file does not resolve, or None."""
    if _SCHEME.match(target) or target.startswith("//"):
        return None  # a URL: not checked here
    file, _, anchor = target.partition("#")
    resolved = (path.parent / file).resolve() if file else path
    if not resolved.is_relative_to(ROOT) or not resolved.exists():
        return f"{target}: no such file in the repository"
    if anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
        return f"{target}: {resolved.relative_to(ROOT)} has no heading with anchor #{anchor}"
    return None


FILES = markdown_files()


def test_the_markdown_files_are_found() -> None:
    names = {str(p.relative_to(ROOT)) for p in FILES}
    assert {"README.md", "examples/README.md", "charts/grove-sharing-webhook/README.md", "docs/BEHAVIOUR.md"} <= names
    assert not any(name.startswith(".venv") for name in names)


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_every_relative_link_resolves(path: Path) -> None:
    problems = [why for target in links(path) if (why := broken(path, target))]
    assert problems == []


def test_the_link_checker_sees_links_and_anchors(tmp_path: Path) -> None:
    assert slug("`review FILE|-`") == "review-file-"
    assert slug("4. Labels, ownership, reconcile, cleanup") == "4-labels-ownership-reconcile-cleanup"
    assert slug("`pcs-create-valid.json`: Grove's workload, allowed") == "pcs-create-validjson-groves-workload-allowed"
    readme_links = links(README)
    assert "examples/README.md" in readme_links and any(link.startswith("docs/") for link in readme_links)
    missing = "docs/" + "no-such-file" + ".md"  # spelled apart: the repository cites no such file
    assert broken(README, missing) and broken(README, "#no-such-heading")
    assert broken(README, "docs/BEHAVIOUR.md#no-such-heading")
    assert broken(README, "docs/BEHAVIOUR.md#4-labels-ownership-reconcile-cleanup") is None


def test_the_readme_is_a_newcomers_page() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 400
    for heading in ("## Quick start", "## Install in a cluster", "## Development", "## Documentation"):
        assert f"\n{heading}\n" in text, heading
    for prerequisite in ("Python 3.11", "`make`", "`curl`", "`jq`", "`base64`", "Kubernetes 1.34", "v0.1.0-alpha.8"):
        assert prerequisite in text, prerequisite


def test_the_readme_cites_only_files_of_the_repository() -> None:
    for cited in re.findall(r"[\w./-]+\.md\b", README.read_text()):
        assert (ROOT / cited).exists(), cited


#: A path of the repository named in code: `webhook/kube/access.py`, `examples/admission/pcs-*.json`.
_REPOSITORY_PATH = re.compile(r"`((?:webhook|tests|bench|charts|examples|docs)/[^`\s]*)`")


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_every_repository_path_named_exists(path: Path) -> None:
    named = _REPOSITORY_PATH.findall(path.read_text())
    missing = [n for n in named if not (any(ROOT.glob(n)) if any(c in n for c in "*?[") else (ROOT / n).exists())]
    assert missing == []


def examples(text: str) -> list[tuple[str, str]]:
    return [(m["command"], m["output"]) for m in _EXAMPLE.finditer(text)]


def test_the_readme_examples_are_tested_ones() -> None:
    shown = examples(README.read_text())
    tested = examples(EXAMPLES.read_text())
    assert len(tested) == 27
    assert len(shown) == 2 and "validate-podcliqueset" in shown[0][0] and "mutate-pod" in shown[1][0]
    for example in shown:
        assert example in tested, example[0]


def test_the_quick_start_curl_answers_as_shown() -> None:
    shown = re.search(r"curl --cacert certs/ca.crt https://127\.0\.0\.1:8443/healthz\n# (.*)\n", README.read_text())
    assert shown
    store = EmbeddedStore([ROOT / "examples" / "objects"])
    store.load()
    response = call(create_app(ServeSettings(), store), "GET", "/healthz")
    assert response.status_code == 200 and response.json() == orjson.loads(shown[1])
