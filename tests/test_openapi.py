"""/v1/openapi.json: a valid OpenAPI 3.1 document of every agent API route, made from the
models the routes use, so that what they send validates against it."""

from __future__ import annotations

from typing import Any

import aiohttp
import jsonschema_rs
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from askbridge.bots.service import Service
from askbridge.bots.surfaces import surface_words
from askbridge.core.api.bodies import built
from askbridge.core.api.errors import ErrorBody, ProblemDetail
from askbridge.core.api.openapi import openapi_document
from askbridge.core.api.status import Actor, StatusObject
from askbridge.core.ask import ask_schema
from askbridge.core.forms import FEW_FIELDS, MAX_FIELDS
from askbridge.core.models import Request
from tests.hostile import requests

DOCUMENT = openapi_document(surface_words())
"""As a server with the registered surfaces serves it."""
NOT_IN_THE_DOCUMENT = {"/v1/agent"}
"""The agent WebSocket, which OpenAPI cannot describe; docs/reference/websocket.md does."""


def validator(component: str) -> jsonschema_rs.Validator:
    schema = {"$ref": f"#/components/schemas/{component}", "components": DOCUMENT["components"]}
    return jsonschema_rs.validator_for(schema, validate_formats=True)


async def test_the_document_is_served_and_valid(
    service: Service, http: aiohttp.ClientSession
) -> None:
    async with http.get(f"{service.url}/v1/openapi.json") as response:
        assert response.status == 200
        assert response.content_type == "application/json"
        served = await response.json()
    assert served == DOCUMENT
    assert served["openapi"] == "3.1.0"
    schemathesis.openapi.from_dict(served).validate()


def test_every_agent_api_route_is_described(service: Service) -> None:
    assert service._runner is not None
    routes = {
        (route.method.lower(), route.resource.canonical)
        for route in service._runner.app.router.routes()
        if route.resource is not None
        and route.method != "HEAD"
        and route.resource.canonical.startswith(("/v1/", "/healthz"))
        and route.resource.canonical not in NOT_IN_THE_DOCUMENT
    }
    described = {(method, path) for path, item in DOCUMENT["paths"].items() for method in item}
    assert described == routes


def test_the_ask_in_the_document_is_v1_schema() -> None:
    alone = ask_schema(surface_words())
    components = DOCUMENT["components"]["schemas"]
    for name, schema in alone.pop("$defs").items():
        assert _refs_to_components(schema) == components[name], name
    assert _refs_to_components(alone) == components["Ask"]


@pytest.mark.parametrize(
    "body",
    [{"form": None}, {"questions": None, "form": None}, {"form": None, "request_id": "a"}],
)
async def test_a_null_form_is_absent_to_the_document_as_to_the_server(
    service: Service, http: aiohttp.ClientSession, body: dict[str, Any]
) -> None:
    async with http.post(f"{service.url}/v1/questions", json=body) as response:
        assert response.status == 422
    assert not validator("Ask").is_valid(body)


def _refs_to_components(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {
            key: value.replace("#/$defs/", "#/components/schemas/")
            if key == "$ref"
            else _refs_to_components(value)
            for key, value in schema.items()
        }
    if isinstance(schema, list):
        return [_refs_to_components(item) for item in schema]
    return schema


STATUS_OBJECT = validator("StatusObject")


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(requests())
def test_status_objects_in_every_state_validate(request: Request) -> None:
    # schemathesis sees only the states its own calls reach; these are answered, cancelled,
    # voted on, reminded, decided by a deadline, with hostile text everywhere.
    body = StatusObject.of(request).model_dump(mode="json")
    STATUS_OBJECT.validate(body)
    # Built without pydantic's checks (`built`): the same body as the checked model gives.
    assert StatusObject.model_validate(body).model_dump(mode="json") == body


def test_a_body_is_built_only_from_every_one_of_its_fields() -> None:
    with pytest.raises(TypeError, match="Actor needs exactly"):
        built(Actor, platform="slack", id="U1")
    with pytest.raises(TypeError, match="Actor needs exactly"):
        built(Actor, platform="slack", id="U1", name="Ann", role="admin")
    made = built(Actor, platform="slack", id="U1", name="Ann")
    assert made == Actor(platform="slack", id="U1", name="Ann")
    assert made.model_dump_json() == '{"platform":"slack","id":"U1","name":"Ann"}'


def test_error_bodies_validate_with_and_without_details() -> None:
    refused = ErrorBody(
        error="rejected", details=[ProblemDetail(location="questions", message="missing")]
    )
    for body in (ErrorBody(error="no request"), refused):
        validator("ErrorBody").validate(body.model_dump(mode="json"))
    assert "details" not in ErrorBody(error="no request").model_dump(mode="json")


def test_the_form_schema_is_described_with_the_fields_a_form_holds() -> None:
    described = ask_schema()["$defs"]["FormInput"]["properties"]["requested_schema"]
    assert f"of 1-{MAX_FIELDS} properties (at most {FEW_FIELDS} where" in described["description"]
