"""The Go types of Grove's ``resourceSharing`` lists (grove.io/v1alpha1), described with ``gotypes``.

The immutability rules compare these lists as ``Semantic.DeepEqual`` does and print the new one as
``json.Marshal`` does (BEHAVIOUR.md §1.1, §2.10): fields in declaration order, ``namespace``,
``filter`` and the filter's lists left out when empty, ``null`` for a list that was not sent. The
three levels differ only in their filter: the PodCliqueSet's names cliques and scaling groups, a
scaling group's names cliques, a clique's entries have none.
"""

from __future__ import annotations

from webhook.core.gocompat.gotypes import STRING, Field, GoType, Ptr, Slice, Struct


def _entry(go_name: str, *filter_lists: str) -> Struct:
    fields: tuple[Field, ...] = (Field("name", STRING), Field("namespace", STRING, omitempty=True), Field("scope", STRING))
    if filter_lists:
        filter_type = Struct(f"{go_name}Filter", tuple(Field(n, Slice(STRING), omitempty=True) for n in filter_lists))
        fields += (Field("filter", Ptr(filter_type), omitempty=True),)
    return Struct(go_name, fields)


PCS_SHARING: GoType = Slice(_entry("v1alpha1.PCSResourceSharingSpec", "childCliqueNames", "childScalingGroupNames"))
SCALING_GROUP_SHARING: GoType = Slice(_entry("v1alpha1.PCSGResourceSharingSpec", "childCliqueNames"))
CLIQUE_SHARING: GoType = Slice(_entry("v1alpha1.ResourceSharingSpec"))
