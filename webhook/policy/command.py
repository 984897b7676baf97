"""The policy and its binding, printed for ``kubectl apply`` (DECISIONS.md §3.2, docs/policy.md).

The validations come in the webhook's order, so the first that fails (the only one whose message
the API server shows) is the webhook's first finding. A message is cut to what the API server shows,
so its first field path always shows, and a line break in it is written ``\\n``: the API server
shows no message of several lines.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import yaml

from webhook.core.pcs.validator import PODCLIQUESET
from webhook.policy import PolicySettings, rules
from webhook.policy.cel import bind

API_VERSION = "admissionregistration.k8s.io/v1"
SHOWN = 1024
"""Characters of a message shown: at most 4 bytes each, within what the API server shows."""


def _shown(message: str) -> str:
    one_line = f"({message}).replace('\\n', '\\\\n')"
    return bind("m", one_line, f"size(m) <= {SHOWN} ? m : m.substring(0, {SHOWN}) + ' ...'")


CREATE_MESSAGE = f"variables.createErrorCount > 1 ? '[' + {rules.MESSAGE} + ']' : {rules.MESSAGE}"
UPDATE_CHECKED = "request.operation == 'UPDATE' && variables.createErrorCount == 0"

VARIABLES = [*rules.OBJECT_VARIABLES, *rules.VARIABLES, *rules.OLD_VARIABLES, *rules.FOREIGN_VARIABLES]
VALIDATIONS = [
    rules.validation(f"{rules.REFUSAL} == ''", _shown(rules.REFUSAL), f"the resourceClaimTemplates cannot be decoded as {PODCLIQUESET} holds them", "Invalid"),
    rules.validation("variables.createErrorCount == 0", _shown(CREATE_MESSAGE), "the PodCliqueSet breaks Grove's resource-sharing rules"),
    rules.validation(
        f"!({UPDATE_CHECKED}) || size({rules.UPDATE_ERRORS}) == 0",
        f"{UPDATE_CHECKED} ? {_shown(rules.UPDATE_MESSAGE)} : ''",
        "resource sharing cannot change after the PodCliqueSet is created",
    ),
    *rules.TEMPLATE_VALIDATIONS,
]


def policy(name: str, failure_policy: str) -> dict[str, Any]:
    """For CREATE and UPDATE of ``grove.io/v1alpha1`` PodCliqueSets, as the webhook registers."""
    rule = {
        "apiGroups": [PODCLIQUESET.group],
        "apiVersions": [PODCLIQUESET.version],
        "resources": ["podcliquesets"],
        "operations": ["CREATE", "UPDATE"],
        "scope": "Namespaced",
    }
    return {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "failurePolicy": failure_policy,
            "matchConstraints": {"matchPolicy": "Exact", "resourceRules": [rule]},
            "variables": [{"name": n, "expression": e} for n, e in VARIABLES],
            "validations": VALIDATIONS,
        },
    }


def binding(name: str, excluded_namespaces: list[str]) -> dict[str, Any]:
    """The binding that makes the policy deny, in every namespace but ``excluded_namespaces``."""
    spec: dict[str, Any] = {"policyName": name, "validationActions": ["Deny"]}
    if excluded_namespaces:
        selector = {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": excluded_namespaces}
        spec["matchResources"] = {"namespaceSelector": {"matchExpressions": [selector]}}
    return {"apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": name}, "spec": spec}


def documents(settings: PolicySettings) -> str:
    items = [policy(settings.name, settings.failure_policy), binding(settings.name, settings.exclude_namespace)]
    if settings.output == "json":
        return json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=2) + "\n"
    return yaml.safe_dump_all(items, sort_keys=False, width=1 << 20)


def policy_command(settings: PolicySettings) -> int:
    sys.stdout.write(documents(settings))
    return 0
