"""The image: built in two stages, run as the chart's non-root user, entered through ``python -m webhook``."""

from __future__ import annotations

import re
import subprocess
import tomllib

import pytest

from deploy.chart import ROOT, values
from deploy.dockerfile import Dockerfile, DockerIgnore
from webhook.cli import COMMANDS
from webhook.settings import ServeSettings

DOCKERFILE = Dockerfile(ROOT / "Dockerfile")
IGNORE = DockerIgnore(ROOT / ".dockerignore")
BUILDER, FINAL = DOCKERFILE.stages
TOOLS = re.compile(r"\b(apt-get|apt|apk|dnf|yum|gcc|g\+\+|cc|make|build-essential|pip install|pip3 install)\b")


def keyword(stage, name):
    return [i for i in stage if i.keyword == name]


def test_two_stages_on_one_python_image_the_package_supports():
    assert len(DOCKERFILE.stages) == 2
    image = DOCKERFILE.base_image(BUILDER)
    assert image == DOCKERFILE.base_image(FINAL), "the copied virtualenv points at the builder's interpreter"
    version = re.fullmatch(r"python:(3\.\d+)-slim(-\w+)?", image)
    assert version, image
    required = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert required == ">=3.11" and tuple(map(int, version.group(1).split("."))) >= (3, 11)


def test_the_final_stage_runs_as_the_numeric_non_root_user_of_the_charts_security_context():
    (user,) = keyword(FINAL, "USER")
    uid, _, gid = user.arguments.partition(":")
    assert uid.isdigit() and gid.isdigit() and int(uid) != 0
    for context in (values()["podSecurityContext"], values()["securityContext"]):
        assert (context["runAsUser"], context["runAsGroup"]) == (int(uid), int(gid))


def test_the_entrypoint_is_python_m_webhook_serving_by_default():
    (entrypoint,) = keyword(FINAL, "ENTRYPOINT")
    (command,) = keyword(FINAL, "CMD")
    assert entrypoint.exec_form == ["python", "-m", "webhook"]
    assert command.exec_form == ["serve"]
    assert command.exec_form[0] in {c.name for c in COMMANDS}


def test_the_final_stage_copies_only_the_built_environment_and_installs_nothing():
    copies = keyword(FINAL, "COPY") + keyword(FINAL, "ADD")
    assert [c.arguments for c in copies] == ["--from=builder /opt/venv /opt/venv"]
    for run in keyword(FINAL, "RUN"):
        assert not TOOLS.search(run.arguments), run.arguments
        assert "pip uninstall" in run.arguments


def test_bytecode_is_compiled_at_build_time_and_never_written_at_run_time():
    builder_runs = " ".join(r.arguments for r in keyword(BUILDER, "RUN"))
    assert "compileall" in builder_runs and "--invalidation-mode unchecked-hash" in builder_runs
    assert "--no-compile" in builder_runs
    environment = " ".join(e.arguments for e in keyword(FINAL, "ENV"))
    assert "PYTHONDONTWRITEBYTECODE=1" in environment


def test_the_image_listens_where_the_server_and_the_chart_do():
    (expose,) = keyword(FINAL, "EXPOSE")
    assert int(expose.arguments) == ServeSettings.model_fields["port"].default == values()["server"]["port"]


def test_every_file_the_builder_copies_exists_and_reaches_the_build_context():
    sources = [c.arguments.split()[:-1] for c in keyword(BUILDER, "COPY")]
    for source in (s for group in sources for s in group):
        assert (ROOT / source).exists(), source
        assert IGNORE.sends(source), f"{source} is copied but .dockerignore keeps it out"


def tracked_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    return listed.stdout.split()


def test_the_build_context_is_the_package_and_the_files_pip_needs():
    sent = sorted(path for path in tracked_files() if IGNORE.sends(path))
    assert {"pyproject.toml", "requirements.lock", "README.md", "webhook/__main__.py", "webhook/cli.py"} <= set(sent)
    outside = [path for path in sent if not path.startswith("webhook/")]
    assert outside == ["README.md", "pyproject.toml", "requirements.lock"]


@pytest.mark.parametrize(
    "path",
    [".venv/bin/python", "certs/tls.key", ".git/HEAD", "tests/deploy/helm.py", "webhook/__pycache__/cli.cpython-311.pyc",
     "webhook/core/__pycache__/naming.cpython-311.pyc", "charts/grove-sharing-webhook/values.yaml", "Dockerfile",
     "requirements-test.lock"],
)
def test_what_the_image_does_not_need_stays_out_of_the_build_context(path):
    assert not IGNORE.sends(path)


def test_the_client_parts_the_image_removes_are_not_imported_by_the_package():
    removed = [r.arguments for r in keyword(BUILDER, "RUN") if "rm -rf" in r.arguments]
    assert removed and "site-packages/kubernetes/aio" in removed[0]
    importing = [p.relative_to(ROOT).as_posix() for p in (ROOT / "webhook").rglob("*.py")
                 if re.search(r"kubernetes\.aio|from kubernetes import .*\baio\b", p.read_text())]
    assert importing == []
