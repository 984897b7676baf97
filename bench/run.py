"""Runs every benchmark script in ``bench/`` one after another (``make bench``).

A script is a module of this directory that runs as a program (it has a ``__main__`` block);
shared harness modules such as ``serving.py`` have none and are skipped. Arguments are passed to
every script, e.g. ``python bench/run.py --n 1000``. The exit code is non-zero when any script fails.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent


def scripts() -> list[Path]:
    return [
        path
        for path in sorted(BENCH.glob("*.py"))
        if path.name != Path(__file__).name and 'if __name__ == "__main__":' in path.read_text()
    ]


def main(arguments: list[str]) -> int:
    failed = []
    for script in scripts():
        print(f"\n# bench/{script.name}\n", flush=True)
        started = time.monotonic()
        code = subprocess.run([sys.executable, str(script), *arguments], cwd=BENCH.parent).returncode
        print(f"\n(bench/{script.name}: exit {code} after {time.monotonic() - started:.0f} s)", flush=True)
        if code:
            failed.append(script.name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
