"""``request.userInfo``: who sent the request the review is about, as the API server authenticated
them (``authentication.k8s.io/v1`` UserInfo). Kept raw in the request and read only by the checks
that depend on the user (DECISIONS.md §3.1); ``null`` members read as empty, as Go reads them."""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, Field, ValidationError

from webhook.core.admission.request import first_problem
from webhook.core.model.meta import GoStr, GoStrList, KubeModel


def _none_to_empty_dict(value: object) -> object:
    return {} if value is None else value


class UserInfo(KubeModel):
    username: GoStr = ""
    uid: GoStr = ""
    groups: GoStrList = Field(default_factory=list)
    extra: Annotated[dict[str, GoStrList], BeforeValidator(_none_to_empty_dict)] = Field(default_factory=dict)


def read_user_info(raw: object) -> UserInfo | str:
    """``request.userInfo`` read (absent or ``null``: nobody), or why it cannot be (``path: problem``)."""
    try:
        return UserInfo.model_validate({} if raw is None else raw)
    except ValidationError as err:
        return f"cannot decode request.userInfo: {first_problem(err)}"
