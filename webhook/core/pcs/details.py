"""What each field error of the validating rules says, in Grove's words (BEHAVIOUR.md §2.5 to §2.10).

One place for the texts the webhook's rules report and the ValidatingAdmissionPolicy generated from
them (``webhook.policy``), so the two paths cannot drift apart in wording. A text with a ``{}`` is
completed with a name, as Grove's ``fmt.Sprintf`` completes it.
"""

from __future__ import annotations

TEMPLATE_NAME_REQUIRED = "template name is required"
DEVICE_REQUESTS_REQUIRED = "at least one device request is required"
REFERENCE_NAME_REQUIRED = "reference name is required"
NAMESPACE_OF_INTERNAL_TEMPLATE = "namespace must be empty when name matches an internal resourceClaimTemplate"
PCS_FILTER_EMPTY = "filter must specify at least one childCliqueNames or childScalingGroupNames entry"
GROUP_FILTER_EMPTY = "filter must specify at least one childCliqueNames entry"

IMMUTABLE = "field is immutable"
CLIQUE_COMPOSITION = "not allowed to change clique composition"
NEW_CLIQUE = "not allowed to change clique composition, new clique name '{}' is not allowed"
GROUP_COMPOSITION = "not allowed to add or remove PodCliqueScalingGroupConfigs"
NEW_GROUP = "not allowed to change scaling group composition, new scaling group name '{}' is not allowed"

TEMPLATE_REFUSED = "{} may not get {}; a template of another namespace may be used only by users who may read it"
"""Completed with the user (``user "<name>"``) and the template (``ResourceClaimTemplate "<ns>/<name>"``)."""
