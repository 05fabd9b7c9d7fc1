"""What every JSON body of the agent API is made of: pydantic models, sent by `json_body`.

Because each route sends a model, `/v1/openapi.json` describes exactly what it sends. A field
marked `omitted()` is left out of the JSON while it has no value (`answers` appears once a
request is answered); a field typed `... | None` without it is sent as `null`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, TypeVar

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


M = TypeVar("M", bound=BaseModel)


def built(model: type[M], **values: Any) -> M:
    """A `model` of `values`, which name each of its fields and were checked where they come
    from (a stored request): what `model_construct` makes, without its walk over every field's
    alias and default, which cost a status object more than writing it as JSON (an agent's
    long-poll is on the click's path)."""
    fields = model.__pydantic_fields__
    if values.keys() != fields.keys():
        raise TypeError(f"{model.__name__} needs exactly {sorted(fields)}")
    made = model.__new__(model)
    object.__setattr__(made, "__dict__", values)
    object.__setattr__(made, "__pydantic_fields_set__", set(values))
    object.__setattr__(made, "__pydantic_extra__", None)
    object.__setattr__(made, "__pydantic_private__", None)
    return made


def json_body(body: Body, status: int = 200) -> web.Response:
    # pydantic-core writes the JSON itself: no dict of the body is built on the way.
    return web.Response(text=body.model_dump_json(), status=status, content_type="application/json")
