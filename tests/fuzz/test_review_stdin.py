"""``webhook review -`` on any standard input: exit 0, 1 or 2; the answer printed is the server's; on
exit 2 exactly one line on stderr; never a traceback. Most inputs go through the command's ``main``
in-process, a few through a real ``python -m webhook`` process."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzz.answers import FUZZ, WEBHOOKS, post
from fuzz.strategies import EXAMPLES, OBJECTS, damaged, dumps, json_values, mutated, reviews, with_odd_label
from webhook.cli import main

COMMAND = ["review", "-", "--objects", str(OBJECTS)]
EXAMPLE_BODIES = [dumps(document) for document in EXAMPLES.values()]
stdins = (
    st.binary(max_size=64)
    | (json_values | reviews).map(dumps)
    | st.sampled_from(EXAMPLE_BODIES).flatmap(damaged)
    | st.sampled_from(sorted(EXAMPLES)).flatmap(lambda name: mutated(EXAMPLES[name], max_changes=2)).map(dumps)
    | st.sampled_from(sorted(EXAMPLES)).flatmap(lambda name: with_odd_label(EXAMPLES[name])).map(dumps)
)


def review_in_process(stdin: bytes) -> tuple[int, bytes, str]:
    """Exit code, stdout and stderr of ``webhook review -`` run by ``main`` with ``stdin``."""
    out, err = io.BytesIO(), io.StringIO()
    stdout = io.TextIOWrapper(out)
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = io.TextIOWrapper(io.BytesIO(stdin)), stdout, err
    try:
        code = main(COMMAND)
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved
    stdout.flush()
    return code, out.getvalue(), err.getvalue()


def check(stdin: bytes, code: int, out: bytes, err: str) -> None:
    assert "Traceback" not in err, err
    assert code in (0, 1, 2), (code, err)
    if code == 2:
        # usage names the program as run: ``webhook`` in-process, ``python -m webhook`` as a process
        assert re.match(r"(python -m )?webhook review: error: ", err) and err.endswith("\n") and err.count("\n") == 1, err
    else:
        assert err == ""
    if not out:
        assert code == 2
        return
    assert out.endswith(b"\n")
    assert out[:-1] in {post(path, stdin).content for path in WEBHOOKS}, "not what the server answers"
    if code != 2:
        assert orjson.loads(out)["response"]["allowed"] is (code == 0)


@settings(FUZZ, max_examples=80)
@given(stdin=stdins)
def test_any_standard_input(stdin: bytes) -> None:
    check(stdin, *review_in_process(stdin))


@pytest.mark.parametrize(
    "stdin",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"\xff\xfe{\x00", id="not-utf-8"),
        pytest.param(b"[" * 100_000, id="nested-100000-deep"),
        pytest.param(dumps(EXAMPLES["pod-worker-a.json"]), id="pod-patched"),
        pytest.param(dumps(EXAMPLES["pcs-create-several-errors.json"]), id="podcliqueset-denied"),
    ],
)
def test_as_a_process(stdin: bytes) -> None:
    """The same, with the interpreter's own start-up, encodings and exit."""
    done = subprocess.run([sys.executable, "-m", "webhook", *COMMAND], input=stdin, capture_output=True, timeout=60)
    check(stdin, done.returncode, done.stdout, done.stderr.decode())
