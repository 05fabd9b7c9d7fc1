"""What every JSON body of the agent API is made of: pydantic models, sent by `json_body`.

Because each route sends a model, `/v1/openapi.json` describes exactly what it sends. A field
marked `omitted()` is left out of the JSON while it has no value (`answers` appears once a
request is answered); a field typed `... | None` without it is sent as `null`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, WithJsonSchema

from askbridge.core.clock import iso

Timestamp = Annotated[
    datetime,
    PlainSerializer(iso, return_type=str),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]
"""A moment in UTC, sent as `2026-11-29T22:30:00.000Z`."""


def _is_none(value: object) -> bool:
    return value is None


def omitted(description: str | None = None, **schema: Any) -> Any:
    """A field that is absent from the JSON, rather than null, while it has no value.

    Type it `X | SkipJsonSchema[None]`, so that the schema says "absent or an X"; `schema`
    adds JSON schema keywords the type cannot state."""

    def describe(field: dict[str, Any]) -> None:
        field.pop("default", None)
        field.update(schema)

    return Field(
        default=None, exclude_if=_is_none, json_schema_extra=describe, description=description
    )


class Body(BaseModel):
    """A JSON body the API sends."""

    model_config = ConfigDict(frozen=True)


def json_body(body: Body, status: int = 200) -> web.Response:
    # pydantic-core writes the JSON itself: no dict of the body is built on the way.
    return web.Response(text=body.model_dump_json(), status=status, content_type="application/json")
