"""values.yaml is the chart's interface: every key a template reads exists, and every key is documented."""

from __future__ import annotations

import re
import tomllib

import pytest
import yaml

import webhook
from deploy.chart import CHART, ROOT, chart_metadata, documented_keys, lookup, values, values_paths_used

USED = values_paths_used()
DOCUMENTED = list(documented_keys(values()))


def readme_rows() -> dict[str, str]:
    """``key`` -> the default cell of each row of the chart README's values tables."""
    section = (CHART / "README.md").read_text().partition("\n## Values\n")[2]
    rows = re.findall(r"^\| `([A-Za-z0-9_.]+)` \| (.*?) \|", section, re.MULTILINE)
    return dict(rows)


def test_templates_read_values():
    assert len(USED) > 40, sorted(USED)


@pytest.mark.parametrize("path", sorted(USED), ids=sorted(USED))
def test_every_values_path_in_the_templates_exists_in_values_yaml(path):
    try:
        lookup(values(), path)
    except KeyError:
        pytest.fail(f".Values.{path} (used in {', '.join(sorted(USED[path]))}) is not in values.yaml")


@pytest.mark.parametrize("key", DOCUMENTED, ids=DOCUMENTED)
def test_every_value_is_documented_in_the_chart_readme_with_its_default(key):
    rows = readme_rows()
    assert key in rows, f"`{key}` has no row in {CHART.name}/README.md"
    cell = rows[key].strip()
    shown = yaml.safe_load(cell.strip("`")) if cell.startswith("`") else None
    assert shown == lookup(values(), key), f"README says {cell} for `{key}`"


def test_the_readme_documents_no_key_that_values_yaml_lacks():
    assert sorted(set(readme_rows()) - set(DOCUMENTED)) == []


def test_the_app_version_is_the_package_version():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert chart_metadata()["appVersion"] == project["version"] == webhook.__version__


def test_the_image_tag_defaults_to_the_app_version(default_install):
    image = default_install.container("webhook")["image"]
    assert image == f"{values()['image']['repository']}:{chart_metadata()['appVersion']}"
