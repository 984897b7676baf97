"""Field errors render and aggregate exactly as apimachinery's ``field.Error`` and ``ToAggregate``."""

from __future__ import annotations

import pytest

from webhook.core.gocompat.fielderrors import (
    FieldError,
    GoString,
    Path,
    aggregate,
    duplicate,
    forbidden,
    invalid,
    not_found,
    not_supported,
    required,
)

P = Path("spec").child("template", "resourceSharing").index(1).child("name")
SCOPES = ["AllReplicas", "PerReplica"]


def test_paths_use_dots_and_indices() -> None:
    assert str(P) == "spec.template.resourceSharing[1].name"
    assert str(Path().child("a").index(0).index(2).child("b", "c")) == "a[0][2].b.c"


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        pytest.param(required(P, "reference name is required"), "Required value: reference name is required", id="required"),
        pytest.param(forbidden(P, "not allowed"), "Forbidden: not allowed", id="forbidden"),
        pytest.param(invalid(P, GoString("rs-shared"), "must be empty"), 'Invalid value: "rs-shared": must be empty', id="invalid-go-string"),
        pytest.param(invalid(P, [{"name": "x"}], "field is immutable"), 'Invalid value: [{"name":"x"}]: field is immutable', id="invalid-json"),
        pytest.param(invalid(P, None, "field is immutable"), "Invalid value: null: field is immutable", id="invalid-nil"),
        pytest.param(invalid(P, -1, "must be greater than or equal to 0"), "Invalid value: -1: must be greater than or equal to 0", id="invalid-int"),
        pytest.param(invalid(P, False, "x"), "Invalid value: false: x", id="invalid-bool"),
        pytest.param(not_found(P, GoString("worker-c")), 'Not found: "worker-c"', id="not-found"),
        pytest.param(duplicate(P, GoString("int-tpl")), 'Duplicate value: "int-tpl"', id="duplicate-string"),
        pytest.param(duplicate(P, ["a", "b"]), 'Duplicate value: ["a","b"]', id="duplicate-slice"),
        pytest.param(duplicate(P, [""]), 'Duplicate value: [""]', id="duplicate-empty-name"),
        pytest.param(
            not_supported(P, "BadScope", SCOPES),
            'Unsupported value: "BadScope": supported values: "AllReplicas", "PerReplica"',
            id="not-supported-typed-string",
        ),
        pytest.param(
            not_supported(P, "", SCOPES), 'Unsupported value: "": supported values: "AllReplicas", "PerReplica"', id="not-supported-empty"
        ),
    ],
)
def test_error_bodies(error: FieldError, expected: str) -> None:
    assert error.body() == expected
    assert str(error) == f"spec.template.resourceSharing[1].name: {expected}"


@pytest.mark.parametrize(
    ("value", "as_go_string", "as_typed_string"),
    [
        pytest.param("<b>&", '"<b>&"', '"\\u003cb\\u003e\\u0026"', id="html"),
        pytest.param("a\x01", '"a\\x01"', '"a\\u0001"', id="control-character"),
        pytest.param("\a", '"\\a"', '"\\u0007"', id="bell"),
        pytest.param("é\u00a0", '"é\\u00a0"', '"é\u00a0"', id="unicode"),
        pytest.param('say "hi"', '"say \\"hi\\""', '"say \\"hi\\""', id="quotes-alike"),
    ],
)
def test_go_strings_print_with_q_and_typed_strings_as_json(value: str, as_go_string: str, as_typed_string: str) -> None:
    """A Go ``string`` (names, namespaces) prints with ``%q``; a typed string (a scope) and any list
    print with ``json.Marshal``."""
    assert not_found(P, GoString(value)).body() == f"Not found: {as_go_string}"
    assert not_supported(P, value, SCOPES).body().startswith(f"Unsupported value: {as_typed_string}: ")
    assert duplicate(P, [value]).body() == f"Duplicate value: [{as_typed_string}]"


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        pytest.param([], None, id="no-errors"),
        pytest.param(["a: x"], "a: x", id="one-without-brackets"),
        pytest.param(["a: x", "b: y"], "[a: x, b: y]", id="several-in-brackets"),
        pytest.param(["a: x", "b: y", "a: x", "c: z"], "[a: x, b: y, c: z]", id="duplicates-dropped-order-kept"),
        pytest.param(["a: x", "a: x"], "a: x", id="only-duplicates-no-brackets"),
    ],
)
def test_aggregate(messages: list[str], expected: str | None) -> None:
    assert aggregate(messages) == expected
