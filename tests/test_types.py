"""The package type-checks: mypy, configured in pyproject.toml, finds nothing in ``webhook``."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_mypy_finds_no_errors(tmp_path: Path) -> None:
    # Inside a virtualenv the cache lives with it, so a rerun takes seconds; CI builds its virtualenv
    # afresh and so always checks from a cold cache. Anywhere else nothing is left behind.
    cache = Path(sys.prefix) / ".mypy_cache" if sys.prefix != sys.base_prefix else tmp_path
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(cache)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Success: no issues found"), result.stdout + result.stderr
