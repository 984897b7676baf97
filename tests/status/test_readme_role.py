"""The README's Role for ``status`` grants exactly the access table's ``status`` row: what every
request it makes is checked against (the cluster tier runs it with that Role alone)."""

from __future__ import annotations

from status.readme import status_role
from webhook.kube.access import ACCESS, Component


def test_the_readme_role_is_the_access_table_row() -> None:
    granted = {(group, resource, verb) for rule in status_role()["rules"]
               for group in rule["apiGroups"] for resource in rule["resources"] for verb in rule["verbs"]}
    declared = {(rule.resource.group, rule.resource.plural, verb) for rule in ACCESS[Component.STATUS] for verb in rule.verbs}
    assert granted == declared
