"""Grove's label keys and values (ai-dynamo/grove operator/api/common/labels.go)."""

MANAGED_BY = "app.kubernetes.io/managed-by"
PART_OF = "app.kubernetes.io/part-of"
COMPONENT = "app.kubernetes.io/component"
PCS_REPLICA_INDEX = "grove.io/podcliqueset-replica-index"
PCSG = "grove.io/podcliquescalinggroup"
PCSG_REPLICA_INDEX = "grove.io/podcliquescalinggroup-replica-index"
PODCLIQUE = "grove.io/podclique"
POD_INDEX = "grove.io/podclique-pod-index"

MANAGED_BY_GROVE = "grove-operator"
COMPONENT_RESOURCE_CLAIM = "resource-claim"


def claim_base_labels(pcs_name: str) -> dict[str, str]:
    """The three labels every Grove-managed ResourceClaim carries (BEHAVIOUR.md §4.5)."""
    return {MANAGED_BY: MANAGED_BY_GROVE, PART_OF: pcs_name, COMPONENT: COMPONENT_RESOURCE_CLAIM}
