"""The command line: subcommands, options generated from the settings, environment variables and
one-line errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic_settings import BaseSettings

from webhook.cli import COMMANDS, build_parser, load, main, options
from webhook.settings import ServeSettings


def markdown_table(model: type[BaseSettings]) -> str:
    """The model's options as a Markdown table, as docs/configuration.md shows them."""
    rows = ["| option | environment | default | what |", "|---|---|---|---|"]
    for option in options(model):
        if option.positional:
            continue
        flag = f"--[no-]{option.flag[2:]}" if option.is_bool else option.flag
        flag = ", ".join([*option.flags[:-1], flag])
        value = "" if option.is_bool else " " + str(option.extra.get("metavar", option.name.upper()))
        if option.choices:
            value = " " + "\\|".join(option.choices)
        repeat = " (repeatable)" if option.repeatable else ""
        rows.append(
            f"| `{flag}{value}`{repeat} | `{option.env}` | {option.default_text} | {option.field.description} |"
        )
    return "\n".join(rows) + "\n"


CONFIGURATION = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def serve_settings(*argv: str) -> ServeSettings:
    arguments = build_parser().parse_args(["serve", *argv])
    return load(ServeSettings, arguments)


def test_help_lists_the_subcommands() -> None:
    result = subprocess.run([sys.executable, "-m", "webhook", "--help"], capture_output=True, text=True, check=True)
    for command in ("serve", "review", "certs"):
        assert f"    {command} " in result.stdout


def test_serve_help_shows_every_option_with_its_variable_and_default(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit:
        main(["serve", "--help"])
    assert exit.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for option in options(ServeSettings):
        assert option.flag in text
        assert f"[env {option.env}; default {option.default_text}]" in text
    assert "[env WEBHOOK_PORT; default 8443]" in text
    assert "[env WEBHOOK_MAX_BODY_BYTES; default 8388608]" in text


def test_serve_help_lists_template_authorization_and_its_modes() -> None:
    result = subprocess.run([sys.executable, "-m", "webhook", "serve", "--help"], capture_output=True, text=True, check=True)
    text = " ".join(result.stdout.split())
    assert "--template-authorization enforce|warn|off" in text
    assert "[env WEBHOOK_TEMPLATE_AUTHORIZATION; default enforce]" in text


def test_template_authorization_from_the_command_line_or_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert serve_settings().template_authorization == "enforce"
    monkeypatch.setenv("WEBHOOK_TEMPLATE_AUTHORIZATION", "warn")
    assert serve_settings().template_authorization == "warn"
    assert serve_settings("--template-authorization", "off").template_authorization == "off"


def test_defaults() -> None:
    settings = serve_settings()
    assert (settings.host, settings.port, str(settings.tls_cert), str(settings.tls_key)) == (
        "127.0.0.1", 8443, "certs/tls.crt", "certs/tls.key"
    )
    assert (settings.keep_alive_timeout, settings.max_body_bytes, settings.strict, settings.on_missing_pcs) == (
        120, 8 * 1024 * 1024, False, "deny"
    )
    assert (settings.objects, settings.namespace, settings.kubeconfig) == ([], [], None)


@pytest.mark.parametrize(
    ("env", "argv", "field", "expected"),
    [
        pytest.param({"WEBHOOK_PORT": "9443"}, [], "port", 9443, id="env-sets-port"),
        pytest.param({"WEBHOOK_PORT": "9443"}, ["--port", "10443"], "port", 10443, id="command-line-wins"),
        pytest.param({"WEBHOOK_STRICT": "true"}, [], "strict", True, id="env-strict"),
        pytest.param({"WEBHOOK_STRICT": "true"}, ["--no-strict"], "strict", False, id="no-strict-wins"),
        pytest.param({"WEBHOOK_TLS_CERT": "/etc/tls/tls.crt"}, [], "tls_cert", Path("/etc/tls/tls.crt"), id="env-tls-cert"),
        pytest.param(
            {"WEBHOOK_OBJECTS": os.pathsep.join(["a.yaml", "objects"])}, [], "objects", [Path("a.yaml"), Path("objects")],
            id="env-objects-split-on-path-separator",
        ),
        pytest.param({}, ["--objects", "a.yaml", "--objects", "b"], "objects", [Path("a.yaml"), Path("b")], id="objects-repeatable"),
        pytest.param({"WEBHOOK_NAMESPACE": "team-a, team-b"}, [], "namespace", ["team-a", "team-b"], id="env-namespaces-split-on-commas"),
        pytest.param({"WEBHOOK_ON_MISSING_PCS": "allow"}, [], "on_missing_pcs", "allow", id="env-on-missing-pcs"),
        pytest.param({"WEBHOOK_LOG_FORMAT": "json"}, [], "log_format", "json", id="env-log-format"),
    ],
)
def test_environment_and_command_line(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], argv: list[str], field: str, expected: object
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert getattr(serve_settings(*argv), field) == expected


@pytest.mark.parametrize(
    ("env", "objects", "kubeconfig", "cluster"),
    [
        pytest.param({}, [], [], False, id="no-cluster-anywhere"),
        pytest.param({"KUBERNETES_SERVICE_HOST": "10.96.0.1"}, [], [], True, id="in-a-pod"),
        pytest.param({"KUBERNETES_SERVICE_HOST": "10.96.0.1"}, ["--objects", "x"], [], False, id="objects-win-in-a-pod"),
        pytest.param({}, [], ["--kubeconfig", "kc"], True, id="kubeconfig"),
    ],
)
def test_which_store_serves(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], objects: list[str], kubeconfig: list[str], cluster: bool
) -> None:
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert serve_settings(*objects, *kubeconfig).uses_cluster is cluster


@pytest.mark.parametrize(
    ("argv", "env", "error"),
    [
        pytest.param(["serve", "--bogus"], {}, "webhook serve: error: unrecognized arguments: --bogus (see 'webhook serve --help')", id="unknown-option"),
        pytest.param(["--bogus"], {}, "webhook: error: unrecognized arguments: --bogus (see 'webhook --help')", id="unknown-option-alone"),
        pytest.param(["--bogus", "serve"], {}, "webhook: error: unrecognized arguments: --bogus (see 'webhook --help')", id="unknown-option-before-the-command"),
        pytest.param(
            ["--port", "9443", "serve"], {},
            "webhook: error: --port is an option of serve: give it after the command, as in 'webhook serve --port ...' (see 'webhook serve --help')",
            id="option-before-its-command",
        ),
        pytest.param([], {}, f"webhook: error: no command given: choose one of {', '.join(c.name for c in COMMANDS)} (see 'webhook --help')", id="no-command"),
        pytest.param(
            ["launch"], {},
            f"webhook: error: argument COMMAND: invalid choice: 'launch' (choose from {', '.join(repr(c.name) for c in COMMANDS)}) (see 'webhook --help')",
            id="unknown-command",
        ),
        pytest.param(["serve", "--port", "http"], {}, "webhook serve: error: invalid value 'http' for --port: Input should be a valid integer, unable to parse string as an integer", id="bad-port"),
        pytest.param(["serve", "--port", "70000"], {}, "webhook serve: error: invalid value '70000' for --port: Input should be less than or equal to 65535", id="port-out-of-range"),
        pytest.param(["serve"], {"WEBHOOK_KEEP_ALIVE_TIMEOUT": "-1"}, "webhook serve: error: invalid value '-1' for WEBHOOK_KEEP_ALIVE_TIMEOUT: Input should be greater than 0", id="bad-env-value"),
        pytest.param(["serve", "--log-format", "xml"], {}, "webhook serve: error: argument --log-format: invalid choice: 'xml' (choose from 'json', 'text') (see 'webhook serve --help')", id="bad-choice"),
        pytest.param(["serve"], {"WEBHOOK_STRICT": "maybe"}, "webhook serve: error: invalid value 'maybe' for WEBHOOK_STRICT: Input should be a valid boolean, unable to interpret input", id="bad-env-bool"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: list[str], env: dict[str, str], error: str
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(argv) == 2
    assert capsys.readouterr().err == error + "\n"


NOT_A_NAMESPACE = "is not one namespace name (a DNS label: lower-case letters, digits and '-')"


@pytest.mark.parametrize(
    ("argv", "env", "source"),
    [
        pytest.param(["serve", "-n", "Team_A"], {}, "--namespace", id="serve"),
        pytest.param(["status", "-n", "Team_A"], {}, "--namespace", id="status"),
        pytest.param(["reconcile", "-n", "Team_A"], {}, "--namespace", id="reconcile"),
        pytest.param(["policy", "--exclude-namespace", "Team_A"], {}, "--exclude-namespace", id="policy"),
        pytest.param(["serve"], {"WEBHOOK_NAMESPACE": "team-b,Team_A"}, "WEBHOOK_NAMESPACE", id="environment"),
    ],
)
def test_every_command_refuses_a_namespace_name_the_api_server_would_not_take(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: list[str], env: dict[str, str], source: str
) -> None:
    """One rule for every namespace option, before anything reaches an API server."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert f" for {source}: 'Team_A' {NOT_A_NAMESPACE}\n" in error and error.count("\n") == 1


@pytest.mark.parametrize(
    ("missing", "error"),
    [
        pytest.param("tls.crt", "cannot read TLS certificate {dir}/tls.crt: No such file or directory (make development certificates with 'python -m webhook certs')", id="certificate"),
        pytest.param("tls.key", "cannot read TLS key {dir}/tls.key: No such file or directory (make development certificates with 'python -m webhook certs')", id="key"),
    ],
)
def test_serve_without_certificate_files_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, missing: str, error: str
) -> None:
    assert main(["certs", "--out", str(tmp_path)]) == 0
    (tmp_path / missing).unlink()
    code = main(["serve", "--tls-cert", str(tmp_path / "tls.crt"), "--tls-key", str(tmp_path / "tls.key")])
    assert code == 1
    assert capsys.readouterr().err == "webhook serve: error: " + error.format(dir=tmp_path) + "\n"


SWAPPED = "(are --tls-cert and --tls-key swapped?)"


@pytest.mark.parametrize(
    ("cert", "key", "problem"),
    [
        pytest.param("tls.crt", "ca.key", "the key is not the certificate's (its public key differs: a key of another pair?)", id="key-of-the-ca"),
        pytest.param("tls.crt", "other/tls.key", "the key is not the certificate's (its public key differs: a key of another pair?)", id="key-of-another-pair"),
        pytest.param("tls.crt", "tls.crt", f"the key file holds a certificate, not a private key {SWAPPED}", id="certificate-as-key"),
        pytest.param("tls.key", "tls.key", f"the certificate file holds a private key, not a certificate {SWAPPED}", id="key-as-certificate"),
        pytest.param("tls.key", "tls.crt", f"the certificate file holds a private key, not a certificate {SWAPPED}", id="swapped"),
        pytest.param("tls.crt", "empty", "the key file is empty", id="empty-key"),
        pytest.param("empty", "tls.key", "the certificate file is empty", id="empty-certificate"),
        pytest.param("tls.crt", "notes.txt", "the key file holds no PEM private key (no '-----BEGIN ... PRIVATE KEY-----' line)", id="not-pem"),
    ],
)
def test_serve_with_a_pair_that_cannot_serve_names_the_problem(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, cert: str, key: str, problem: str
) -> None:
    assert main(["certs", "--out", str(tmp_path)]) == 0
    assert main(["certs", "--out", str(tmp_path / "other")]) == 0
    (tmp_path / "empty").write_bytes(b"")
    (tmp_path / "notes.txt").write_text("a key goes here\n")
    capsys.readouterr()
    code = main(["serve", "--tls-cert", str(tmp_path / cert), "--tls-key", str(tmp_path / key)])
    assert code == 1
    assert capsys.readouterr().err == (
        f"webhook serve: error: cannot use TLS certificate {tmp_path}/{cert} with key {tmp_path}/{key}: {problem}\n"
    )


def test_the_docs_list_every_option_of_every_command() -> None:
    readme = CONFIGURATION.read_text()
    for command in COMMANDS:
        table = markdown_table(command.settings)
        assert table in readme, f"docs/configuration.md is missing this option table of '{command.name}':\n{table}"
