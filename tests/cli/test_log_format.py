"""``--log-format``: JSON lines a log collector can index (the request uid as its own field), or text."""

from __future__ import annotations

import logging

import orjson
import pytest

from webhook import logs


def test_json_lines_carry_extra_fields_and_the_exception(capsys: pytest.CaptureFixture[str]) -> None:
    logs.configure("info", "json")
    log = logging.getLogger("webhook.server.endpoint")
    try:
        raise RuntimeError("bug")
    except RuntimeError:
        log.exception("internal error", extra={"uid": "uid-1", "webhook": "validate-podcliqueset"})
    log.debug("not written at info")
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    entry = orjson.loads(lines[0])
    assert {k: entry[k] for k in ("level", "logger", "message", "uid", "webhook")} == {
        "level": "error",
        "logger": "webhook.server.endpoint",
        "message": "internal error",
        "uid": "uid-1",
        "webhook": "validate-podcliqueset",
    }
    assert entry["exception"].endswith("RuntimeError: bug")
    assert entry["time"].endswith("+00:00")


def test_text_lines(capsys: pytest.CaptureFixture[str]) -> None:
    logs.configure("warning", "text")
    logging.getLogger("webhook.server.tls").warning("cannot load %s", "tls.crt")
    logging.getLogger("webhook.server.tls").info("not written at warning")
    assert capsys.readouterr().err.splitlines()[0].endswith(" WARNING webhook.server.tls: cannot load tls.crt")


def test_uvicorns_lines_carry_the_projects_logger_names(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):  # as uvicorn's defaults, used by another test, may leave them
        for attribute, value in (("level", logging.NOTSET), ("propagate", True), ("disabled", False), ("handlers", [])):
            monkeypatch.setattr(logging.getLogger(name), attribute, value)
    logging.getLogger().manager._clear_cache()
    logs.configure("info", "json")
    logging.getLogger("uvicorn.error").info("Started server process [%d]", 42)
    logging.getLogger("uvicorn.access").info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5000", "GET", "/readyz", "1.1", 503)
    started, access = (orjson.loads(line) for line in capsys.readouterr().err.splitlines())
    assert (started["logger"], started["message"]) == ("webhook.server.uvicorn", "Started server process [42]")
    assert {k: access[k] for k in ("logger", "client", "method", "path", "status")} == {
        "logger": "webhook.server.access", "client": "127.0.0.1:5000", "method": "GET", "path": "/readyz", "status": 503,
    }
    logs.configure("info", "text")
    logging.getLogger("uvicorn.error").info("Finished server process [%d]", 42)
    assert capsys.readouterr().err.endswith(" INFO webhook.server.uvicorn: Finished server process [42]\n")


def test_text_lines_escape_control_characters_and_cut_long_values(capsys: pytest.CaptureFixture[str]) -> None:
    logs.configure("info", "text")
    log = logging.getLogger("webhook.server.stores")
    forged = "rs-test\n2026-01-01 00:00:00,000 ERROR webhook.server: forged\r\x1b[2J\u2028"
    log.warning("PodCliqueSet %s/%s cannot be read: %s", "default", forged, "x" * 10_000)
    [line] = capsys.readouterr().err.splitlines()
    assert line.endswith(
        " WARNING webhook.server.stores: PodCliqueSet default/"
        "rs-test\\n2026-01-01 00:00:00,000 ERROR webhook.server: forged\\r\\x1b[2J\\u2028 cannot be read: "
        + "x" * logs.VALUE_LIMIT + "...(9744 more characters)"
    )


def test_a_message_argument_is_cut_at_the_longer_limit(capsys: pytest.CaptureFixture[str]) -> None:
    logs.configure("info", "text")
    logging.getLogger("webhook.server.decisions").info("denied: %s", logs.Message("m" * 5000))
    [line] = capsys.readouterr().err.splitlines()
    assert line.endswith(": denied: " + "m" * logs.MESSAGE_LIMIT + "...(3976 more characters)")


def test_json_lines_keep_whole_values(capsys: pytest.CaptureFixture[str]) -> None:
    logs.configure("info", "json")
    forged = "rs-test\nERROR forged " + "x" * 10_000
    logging.getLogger("webhook.server.stores").warning("cannot read %s", forged, extra={"object": forged})
    [line] = capsys.readouterr().err.splitlines()
    entry = orjson.loads(line)
    assert (entry["message"], entry["object"]) == (f"cannot read {forged}", forged)
