"""values.schema.json makes Helm refuse a misspelt key or an impossible value before rendering anything."""

from __future__ import annotations

import pytest

from deploy.helm import HelmError


@pytest.mark.parametrize(
    ("values", "complaint"),
    [
        ({"replicas": 3}, "additional properties 'replicas' not allowed"),
        ({"server": {"onMissingPCS": "allow"}}, "additional properties 'onMissingPCS' not allowed"),
        ({"certificates": {"mode": "vault"}},
         "at '/certificates/mode': value must be one of 'controller', 'certManager', 'selfSigned', 'existingSecret'"),
        ({"webhooks": {"mutating": {"failurePolicy": "Retry"}}},
         "at '/webhooks/mutating/failurePolicy': value must be one of 'Fail', 'Ignore'"),
        ({"webhooks": {"validating": {"timeoutSeconds": 60}}}, "at '/webhooks/validating/timeoutSeconds': maximum"),
        ({"server": {"onMissingPcs": "warn"}}, "at '/server/onMissingPcs': value must be one of 'deny', 'allow'"),
        ({"server": {"templateAuthorization": "deny"}},
         "at '/server/templateAuthorization': value must be one of 'enforce', 'warn', 'off'"),
        ({"reconciler": {"workers": 0}}, "at '/reconciler/workers': minimum"),
        ({"server": {"namespaces": "team-a"}}, "at '/server/namespaces': got string, want array"),
        ({"reconciler": {"mode": "daemonset"}}, "at '/reconciler/mode': value must be one of 'sidecar', 'deployment'"),
        ({"certificates": {"controller": {"validity": "90 days"}}}, "at '/certificates/controller/validity'"),
        ({"webhooks": {"mutating": {"matchConditions": [{"name": "all"}]}}},
         "at '/webhooks/mutating/matchConditions/0': missing property 'expression'"),
        ({"image": {"digest": "latest"}}, "at '/image/digest'"),
    ],
    ids=["misspelt top-level key", "misspelt server option", "unknown certificate mode",
         "unknown failure policy", "timeout over the API server's 30 s", "unknown missing-PodCliqueSet policy",
         "unknown template authorization mode", "no workers", "namespaces as a string", "unknown reconciler mode",
         "a lifetime that is no duration", "a match condition without its expression", "a digest that is a tag"],
)
def test_helm_refuses_values_the_chart_cannot_use(render, values, complaint):
    with pytest.raises(HelmError) as refused:
        render(values)
    assert "values don't meet the specifications of the schema" in str(refused.value)
    assert complaint in str(refused.value)
