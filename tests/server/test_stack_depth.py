"""From the ASGI entry to a Grove rule is a short walk, as in controller-runtime with Grove.

The real server (``webhook serve`` over TLS) runs with a breakpoint on Grove's duplicate-name rule
(``validate_resource_sharing_specs``): where a debugger would stop, the stack is written down, and
the frames of this project between uvicorn's call into the application and the rule are counted.
A maintainer following a review through the code reads these frames, and no more.
"""

from __future__ import annotations

from pathlib import Path

import orjson
from server.reviews import VALIDATE, WORKLOAD, body, review, workload_pcs
from server.serverproc import serve

import webhook

MAX_FRAMES = 12
MAX_MODULES = 8

# Runs the server as ``python -m webhook`` does, the rule replaced by one that records the stack
# (a line of JSON each time it is called: once per list of entries) and then does what it does.
BREAKPOINT = """
import inspect, json, sys
from webhook.core.pcs import rules
recorded = sys.argv.pop(1)
rule = rules.validate_resource_sharing_specs
def stopped_here(*args):
    stack, frame = [], inspect.currentframe()
    while frame is not None:
        stack.append([frame.f_code.co_filename, frame.f_code.co_qualname])
        frame = frame.f_back
    with open(recorded, "a") as out:
        print(json.dumps(stack), file=out)
    yield from rule(*args)
rules.validate_resource_sharing_specs = stopped_here
from webhook.cli import main
sys.exit(main(sys.argv[1:]))
"""

PROJECT = str(Path(webhook.__file__).parent)


def test_a_validating_review_reaches_the_rule_within_12_frames_of_8_modules(tmp_path: Path) -> None:
    recorded = tmp_path / "stack.json"
    pcs = workload_pcs()
    pcs["spec"]["template"]["resourceSharing"] = [{"name": "gpu", "scope": "AllReplicas"}] * 2
    with serve(tmp_path, "--objects", str(WORKLOAD), program=("-c", BREAKPOINT, str(recorded))) as server:
        with server.client() as client:
            answer = client.post(VALIDATE, content=body(review(pcs)), headers={"content-type": "application/json"})
    assert "Duplicate value" in answer.json()["response"]["status"]["message"]  # the rule ran, and decided

    stops = [orjson.loads(line) for line in recorded.read_text().splitlines()]
    assert len(stops) >= 2  # the PodCliqueSet's list and its scaling groups' lists
    for stack in stops:
        walk = ["core/pcs/rules.py:validate_resource_sharing_specs"]  # where the breakpoint stands
        for filename, function in stack[1:]:  # up to the first frame not the project's: the ASGI server's
            if not filename.startswith(PROJECT):
                break
            walk.append(f"{Path(filename).relative_to(PROJECT).as_posix()}:{function}")
        shown = "\n  ".join(reversed(walk))
        assert "uvicorn" in filename, f"the walk does not start at the ASGI server but at {filename}:{function}"
        modules = {frame.split(":")[0] for frame in walk}
        assert len(walk) <= MAX_FRAMES and len(modules) <= MAX_MODULES, f"{len(walk)} frames in {len(modules)} modules:\n  {shown}"
