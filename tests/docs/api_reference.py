"""The HTTP API reference, rendered from the OpenAPI document the server serves.

Every operation with its parameters and status codes, then every schema with its fields, so the
page says what `GET /v1/openapi.json` says and changes with it.
"""

from __future__ import annotations

import html
import json
from typing import Any

from askbridge.bots.surfaces import surface_words
from askbridge.core.api.openapi import openapi_document

Schema = dict[str, Any]
METHODS = ("get", "post", "put", "patch", "delete")


def openapi_json() -> str:
    return json.dumps(openapi_document(surface_words()), indent=2, ensure_ascii=False) + "\n"


def api_page() -> str:
    document = openapi_document(surface_words())
    responses: Schema = document["components"]["responses"]
    lines = ["## Operations", ""]
    for path, operations in document["paths"].items():
        for method in METHODS:
            if method in operations:
                lines += _operation(method, path, operations[method], responses)
    lines += ["## Schemas", ""]
    for name, schema in document["components"]["schemas"].items():
        lines += _schema(name, schema)
    return "\n".join(lines) + "\n"


def _operation(method: str, path: str, operation: Schema, responses: Schema) -> list[str]:
    lines = [f"### `{method.upper()} {path}`", "", _text(operation.get("summary", "")), ""]
    if operation.get("description"):
        lines += [_text(operation["description"]), ""]
    if operation.get("security") == []:
        lines += ["No token needed.", ""]
    if parameters := operation.get("parameters"):
        lines += ["| parameter | in | type | meaning |", "|---|---|---|---|"]
        for parameter in parameters:
            required = " (required)" if parameter.get("required") else ""
            lines.append(
                f"| `{parameter['name']}`{required} | {parameter['in']} | "
                f"{type_of(parameter.get('schema', {}))} | "
                f"{_text(parameter.get('description', ''))} |"
            )
        lines.append("")
    if body := operation.get("requestBody"):
        lines += [f"Body: {_content(body)}", ""]
    lines += ["| status | meaning | body |", "|---|---|---|"]
    for code, response in operation["responses"].items():
        if "$ref" in response:
            response = responses[response["$ref"].rsplit("/", 1)[1]]
        lines.append(
            f"| {code} | {_text(response.get('description', ''))} | {_content(response)} |"
        )
    return [*lines, ""]


def _content(holder: Schema) -> str:
    shown = []
    for media, content in holder.get("content", {}).items():
        schema = content.get("schema")
        shown.append(f"{type_of(schema)} (`{media}`)" if schema else f"`{media}`")
    return ", ".join(shown)


def _schema(name: str, schema: Schema) -> list[str]:
    lines = [f"### {name}", ""]
    if schema.get("description"):
        lines += [_text(schema["description"]), ""]
    properties: Schema = schema.get("properties", {})
    if not properties:
        return [*lines, f"{type_of(schema)}", ""]
    required = set(schema.get("required", ()))
    lines += ["| field | type | meaning |", "|---|---|---|"]
    for field, spec in properties.items():
        mark = " (required)" if field in required else ""
        lines.append(
            f"| `{field}`{mark} | {type_of(spec)} | {_text(spec.get('description', ''))} |"
        )
    return [*lines, ""]


def type_of(schema: Schema | None) -> str:
    """A JSON schema as a short phrase: `string`, a list of a linked schema, one of several."""
    if not schema:
        return "any"
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        return f"[{name}](#{name.lower()})"
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    if "enum" in schema:
        return " \\| ".join(f"`{json.dumps(value)}`" for value in schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " or ".join(dict.fromkeys(type_of(choice) for choice in schema[key]))
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind == "array":
        return f"list of {type_of(schema.get('items'))}"
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return f"object of {type_of(schema['additionalProperties'])}"
    return str(kind)


def _text(text: str) -> str:
    """Prose for a table cell: one line, pipes escaped, angle brackets outside code spans
    shown rather than read as HTML."""
    parts = " ".join(text.split()).replace("|", "\\|").split("`")
    return "`".join(p if i % 2 else html.escape(p, quote=False) for i, p in enumerate(parts))
