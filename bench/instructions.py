"""Instructions per review, counted by valgrind's cachegrind: the work a decision does, counted
alike (within about 1 %) from run to run on a machine whose timings move by a third
within the hour (docs/PERFORMANCE.md, sixth pass).

Each kind runs twice under cachegrind after the same set-up, answering ``--reviews`` reviews and
answering none; the difference divided by their number is the count per review (``--n``). The collector is
off and ``PYTHONHASHSEED`` fixed, so that two runs do the same work. Kinds: a cold CREATE and a cold
UPDATE of ``spec.replicas`` of Grove's e2e PodCliqueSet (a new validator per review, a container
image varied so that no two specs are alike), that UPDATE answered by a validator that admitted its
old object (in the set-up: as a running webhook meets most UPDATEs), a CREATE of a spec seen
before under a new name (one validator), and a cold CREATE whose pod templates are large (60
environment variables and 10 volume mounts per container, 10 volumes per pod). Needs valgrind (skipped without it). Run:
``python bench/instructions.py``.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable
from typing import Any

import orjson
from decisions import VALIDATE, pcs_reviews
from serving import answered, heading

from webhook.core.pcs.validator import PodCliqueSetValidator

KINDS = {
    "cold": "validate, CREATE, a spec never seen",
    "cold-update": "validate, UPDATE of spec.replicas only, a spec never seen",
    "update-admitted": "validate, UPDATE of spec.replicas only, its old object admitted by the same validator",
    "distinct": "validate, CREATE, a spec seen under a new name",
    "cold-large": "validate, CREATE, a spec never seen, its pod templates large (9.5 KB)",
}
MADE = 200
"""Reviews made in every run, answered or not, so that both runs of a kind set up the same."""


def _varied(body: bytes, k: int, large: bool = False) -> Any:
    """The review with the first clique's first container image made the ``k``-th; with ``large``,
    every pod template grown as ``KINDS`` says."""
    review = orjson.loads(body)
    cliques = review["request"]["object"]["spec"]["template"]["cliques"]
    cliques[0]["spec"]["podSpec"]["containers"][0]["image"] = f"image-{k}"
    for clique in cliques if large else ():
        pod = clique["spec"]["podSpec"]
        for container in pod["containers"]:
            container["env"] = [{"name": f"VAR_{i}", "value": f"value-{i}-{k}"} for i in range(60)]
            container["volumeMounts"] = [{"name": f"volume-{i}", "mountPath": f"/mnt/{i}"} for i in range(10)]
        pod["volumes"] = [{"name": f"volume-{i}", "configMap": {"name": f"config-{i}"}} for i in range(10)]
    return review


def workload(kind: str) -> Callable[[int], None]:
    """What one run of ``kind`` answers: ``run(n)`` answers the first ``n`` of ``MADE`` reviews."""
    reviews = pcs_reviews()
    if kind == "distinct":
        validator = PodCliqueSetValidator()
        bodies = [reviews["CREATE"](k) for k in range(MADE)]
        answered(validator, VALIDATE, bodies[0])
        return lambda n: _answer(lambda: validator, bodies[:n])
    review = reviews["CREATE" if kind in ("cold", "cold-large") else "UPDATE of spec.replicas only"]
    bodies = [orjson.dumps(_varied(review(k), k, large=kind == "cold-large")) for k in range(MADE)]
    if kind == "update-admitted":
        return _admitted(bodies)
    return lambda n: _answer(PodCliqueSetValidator, bodies[:n])


def _admitted(updates: list[bytes]) -> Callable[[int], None]:
    """Each UPDATE answered by a validator that admitted its old object (a CREATE, in the set-up):
    as a running webhook meets most UPDATEs, the old spec remembered from its admission."""
    validators = []
    for body in updates:
        review = orjson.loads(body)
        request = {**review["request"], "operation": "CREATE", "object": review["request"]["oldObject"], "oldObject": None}
        validator = PodCliqueSetValidator()
        answered(validator, VALIDATE, orjson.dumps({**review, "request": request}))
        validators.append(validator)
    return lambda n: _answer(iter(validators).__next__, updates[:n])


def _answer(validator: Callable[[], PodCliqueSetValidator], bodies: list[bytes]) -> None:
    for body in bodies:
        answered(validator(), VALIDATE, body).content()


def counted(kind: str, reviews: int, script: str = __file__) -> subprocess.Popen[str]:
    """``script --child kind --n reviews`` started under cachegrind."""
    command = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
    command += [sys.executable, script, "--child", kind, "--n", str(reviews)]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})


def instructions(run: subprocess.Popen[str]) -> int:
    _, stderr = run.communicate()
    found = re.search(r"I\s+refs:\s+([\d,]+)", stderr)
    if run.returncode != 0 or found is None:
        raise SystemExit(f"valgrind did not count the run: {stderr.strip().splitlines()[-1:]}")
    return int(found.group(1).replace(",", ""))


def per_review(kinds: Iterable[str], reviews: int, script: str = __file__) -> dict[str, int]:
    """Instructions per review of each kind: its run of ``reviews`` less its run of none, all
    started at once."""
    runs = {kind: (counted(kind, 0, script), counted(kind, reviews, script)) for kind in kinds}
    return {kind: (instructions(some) - instructions(none)) // reviews for kind, (none, some) in runs.items()}


Workload = Callable[[str], Callable[[int], None]]
"""What one counted run of a kind does: ``workload(kind)(n)`` for the first ``n`` of ``MADE``."""


def count_kinds(script: str, doc: str, kinds: dict[str, str], workload: Workload, unit: str, column: str) -> None:
    """The command line of a counting script (``script``, described by ``doc``): ``--child`` runs
    one kind (under cachegrind), else every kind is counted and printed as a table of
    instructions per ``unit``."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--n", type=int, default=MADE, help=f"{unit}s in the counted run (at most {MADE})")
    parser.add_argument("--child", choices=kinds, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    count = min(arguments.n, MADE)
    if arguments.child:
        run = workload(arguments.child)
        gc.disable()
        run(count)
        return
    if shutil.which("valgrind") is None:
        print("skipped: valgrind, which counts the instructions, is not installed")
        return
    counts = per_review(kinds, count, script)
    print(heading(f"{count} {unit}s per count, cachegrind") + "\n")
    print(f"| {column} | instructions per {unit} |\n|---|---|")
    for kind, instructions_per in counts.items():
        print(f"| {kinds[kind]} | {instructions_per:,} |")


if __name__ == "__main__":
    count_kinds(__file__, __doc__, KINDS, workload, "review", "kind")
