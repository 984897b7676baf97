"""The Role the README gives for ``status``, as a document."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

README = Path(__file__).resolve().parents[2] / "README.md"


def status_role() -> dict[str, Any]:
    found = re.search(r"```yaml\n(apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\n.*?grove-sharing-status.*?)```",
                      README.read_text(), re.S)
    assert found, "the README gives no Role for status"
    role: dict[str, Any] = yaml.safe_load(found.group(1))
    return role
