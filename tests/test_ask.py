"""The one model of an ask: every input bounded, every refusal worded once, on every path."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import aiohttp
import pytest

from askbridge.bots.client import InvalidRequest, request_body
from askbridge.bots.service import Service
from askbridge.bots.surfaces import surface_words
from askbridge.core.ask import MAX_SECONDS, Ask, ask_schema
from askbridge.core.errors import InvalidQuestion, UnknownTarget
from askbridge.core.models import Target
from askbridge.core.targets import parse_target
from tests.conftest import DATABASE

JSON = {"Content-Type": "application/json"}


def ask(**fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = copy.deepcopy(DATABASE)
    body.update(fields)
    return body


def problems(raw: Any) -> list[str]:
    """The problems the server names, with examples from its registered surfaces."""
    with pytest.raises(InvalidQuestion) as caught:
        Ask.parse(raw, surface_words())
    return [str(p) for p in caught.value.problems]


@pytest.mark.parametrize("field", ["timeout_s", "remind_after_s"])
@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (math.nan, "nan"),
        (math.inf, "inf"),
        (-math.inf, "-inf"),
        (1e308, "1e+308"),
        (10**30, "1000000000000000000000000000000"),
        (MAX_SECONDS + 0.5, "2592000.5"),
        (0, "0"),
        (True, "True"),
        ("60", "'60'"),
    ],
)
def test_seconds_are_finite_positive_and_at_most_thirty_days(
    field: str, value: Any, shown: str
) -> None:
    [problem] = problems(ask(**{field: value}))
    assert problem.startswith(f"{field}: must be a")
    assert problem.endswith(f"at most 2592000, got {shown}")


def test_the_longest_deadline_and_reminder_are_accepted() -> None:
    parsed = Ask.parse(ask(timeout_s=MAX_SECONDS, remind_after_s=10**6))
    assert (parsed.timeout_s, parsed.remind_after_s) == (MAX_SECONDS, 1e6)


@pytest.mark.parametrize("value", [math.nan, 10**30, 2.0, -1, "2"])
def test_quorum_is_a_whole_number_from_one_to_fifty(value: Any) -> None:
    [problem] = problems(ask(quorum=value))
    assert problem.startswith("quorum: must be a whole number from 1 to 50, got ")


def test_a_huge_integer_is_quoted_short() -> None:
    [problem] = problems(ask(remind_after_s=10**400))
    assert problem.endswith("...0000000000000000000")
    assert len(problem) < 200


@pytest.mark.parametrize(
    ("path", "location"),
    [
        (("questions", 0, "question"), "questions[0].question"),
        (("questions", 1, "header"), "questions[1].header"),
        (("questions", 0, "options", 1, "label"), "questions[0].options[1].label"),
        (("questions", 1, "options", 2, "description"), "questions[1].options[2].description"),
        (("context",), "context"),
        (("request_id",), "request_id"),
        (("answerers",), "answerers[0]"),
        (("target",), "target"),
    ],
)
def test_a_lone_surrogate_is_refused_in_every_text(
    path: tuple[str | int, ...], location: str
) -> None:
    body = ask(context="fine", answerers=["web:ok"], target="web")
    *parents, last = path
    holder: Any = body
    for key in parents:
        holder = holder[key]
    bad = "web:x\ud800" if last in ("answerers", "target") else "x\ud800y"
    holder[last] = [bad] if last == "answerers" else bad
    [problem] = problems(body)
    assert problem.startswith(f"{location}: must be valid Unicode text, got a lone surrogate ")
    assert "'\\ud800'" in problem


@pytest.mark.parametrize("field", ["name", "cwd"])
def test_a_lone_surrogate_in_a_tool_calls_name_or_directory_is_named_as_in_any_text(
    field: str,
) -> None:
    """pydantic reads these texts (each with a length limit) as UTF-8 first, in words of its own
    that do not say what to send instead."""
    tool = {"name": "Bash", "input": {"command": "ls"}, "cwd": "/srv"}
    tool[field] = "x\ud800y"
    [problem] = problems(ask(tool=tool))
    assert problem == (
        f"tool.{field}: must be valid Unicode text, got a lone surrogate '\\ud800' at "
        "character 1 (half of a UTF-16 pair; send the whole character)"
    )


def test_a_target_object_with_a_lone_surrogate_is_refused() -> None:
    [problem] = problems(ask(target={"platform": "slack", "channel": "C\udc00"}))
    assert problem.startswith("target.channel: must be valid Unicode text")


def test_missing_questions_are_named_like_any_other_non_list() -> None:
    assert problems({"target": "web"}) == ["questions: must be a list of 1-4 questions, got null"]
    assert problems({"questions": "x"}) == ["questions: must be a list of 1-4 questions, got str"]


def test_context_holds_at_most_500_characters_and_no_nul() -> None:
    assert Ask.parse(ask(context="é" * 500)).context == "é" * 500
    assert problems(ask(context="x" * 5000)) == [
        "context: must be a text of at most 500 characters, got 5000 characters"
    ]
    assert problems(ask(context="a\x00b")) == [
        "context: must not contain NUL characters, got one at character 1"
    ]


@pytest.mark.parametrize(
    "bad",
    ["ftp://example.com/x", "https://", "https://example.com/a b", "https://" + "x" * 2048, 42],
)
def test_a_forms_link_and_a_callback_url_are_refused_by_the_same_rule(bad: Any) -> None:
    link = ask(form={"message": "Sign in", "url": bad})
    del link["questions"]
    [as_link] = problems(link)
    [as_callback] = problems(ask(callback_url=bad))
    assert as_link.startswith("form.url: must be an http:// or https:// URL")
    assert as_link.removeprefix("form.url: ") == as_callback.removeprefix("callback_url: ")


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ("https://exa\u200bmple.com/", "without invisible characters"),
        ("https://e.example/\U0001f469\u200d\U0001f467", "without invisible characters"),
        ("https://example.com:99999/", "(Port out of range 0-65535)"),
    ],
)
def test_a_callback_url_names_a_host_as_reached_and_a_real_port(bad: str, why: str) -> None:
    """askbridge sends to a callback_url itself: the host it checks must be the one it reaches,
    and nothing invisible anywhere."""
    [problem] = problems(ask(callback_url=bad))
    assert problem.startswith("callback_url: must be an http:// or https:// URL")
    assert why in problem


def form_link(url: str) -> dict[str, Any]:
    asked = ask(form={"message": "Sign in", "url": url})
    del asked["questions"]
    return asked


@pytest.mark.parametrize(
    ("link", "why"),
    [
        ("https://e.example/a\x07b", "without control characters or direction marks"),
        (
            "https://e.example/\u202egpj.exe",
            "without control characters or direction marks",
        ),
        ("https://exa\u200bmple.com/", "without invisible characters in its host"),
        ("https://e.example:99999/", "(Port out of range 0-65535)"),
    ],
)
def test_a_forms_link_reads_as_it_opens_and_opens_somewhere(link: str, why: str) -> None:
    """A person is sent where a form's link points: what they read must be where it goes."""
    [problem] = problems(form_link(link))
    assert problem.startswith("form.url: must be an http:// or https:// URL")
    assert why in problem


def test_a_forms_link_may_hold_any_other_text_past_its_host() -> None:
    link = "https://e.example/\U0001f469\u200d\U0001f467/<!channel>?q=\u00e9&x=%zz#a#b"
    form = Ask.parse(form_link(link)).form
    assert form is not None
    assert form.url == link


def test_at_most_ten_targets() -> None:
    assert len(Ask.parse(ask(target=["web"] * 10)).target) == 10
    assert problems(ask(target=["web"] * 20_000)) == [
        "target: must name at most 10 targets, got 20000"
    ]


def test_every_bad_target_in_a_list_is_named() -> None:
    assert problems(ask(target=["web", ":x", 7, {"channel": "C1"}])) == [
        "target[1]: names no platform, got ':x'; use e.g. 'web' or 'slack:C0123'",
        "target[2]: must be a string such as 'web' or 'slack:C0123', or an object such as "
        '{"platform": "slack", "channel": "C0123"}, got 7',
        "target[3].platform: field required",
    ]


def test_without_surfaces_the_messages_name_the_grammar() -> None:
    with pytest.raises(InvalidQuestion) as caught:
        Ask.parse(ask(target=[7], answerers=["bob"]))
    assert [str(p) for p in caught.value.problems] == [
        "target[0]: must be a string such as '<platform>:<channel>', or an object such as "
        '{"platform": "<platform>", "channel": "<channel>"}, got 7',
        "answerers[0]: must be <platform>:<person id> or <platform>-<kind>:<group id>, got 'bob'",
    ]


def test_at_most_fifty_answerers() -> None:
    fifty = [f"web:p{i}" for i in range(50)]
    assert Ask.parse(ask(answerers=fifty)).answerers == tuple(fifty)
    assert problems(ask(answerers=[*fifty, "web:one-more"])) == [
        "answerers: must name at most 50 answerers, got 51"
    ]


def test_every_key_of_the_schema_target_object_is_read() -> None:
    target_object = ask_schema()["$defs"]["TargetObject"]["properties"]
    assert set(target_object) == {"platform", "channel", "thread", "thread_ts", "thread_id"}
    for key in ("thread", "thread_ts", "thread_id"):
        parsed = Ask.parse(ask(target={"platform": "Slack", "channel": "C1", key: "17.5"}))
        assert parsed.target == (Target(platform="slack", channel="C1", thread="17.5"),)


def test_the_schema_states_the_bounds() -> None:
    schema = ask_schema()
    properties = schema["properties"]
    assert properties["context"]["anyOf"][0]["maxLength"] == 500
    assert properties["timeout_s"]["anyOf"][0]["maximum"] == MAX_SECONDS
    assert properties["answerers"]["anyOf"][0]["maxItems"] == 50
    assert properties["target"]["anyOf"][2]["maxItems"] == 10
    assert schema["$defs"]["UserQuestion"]["properties"]["header"]["maxLength"] == 12


def test_a_flood_of_problems_is_cut_short() -> None:
    body = ask()
    body["questions"][0]["options"] = [{"label": 7}] * 1000
    found = problems(body)
    assert len(found) == 21
    assert found[-1] == "and 980 more not listed here"


def test_the_wire_body_reads_back_as_the_same_ask() -> None:
    body = ask(
        target=[{"platform": "slack", "channel": "C1", "thread_id": 5}, "web"],
        answerers="web:a, web:b",
        quorum=2,
        timeout_s=600,
        remind_after_s=300,
        context="deploy-bot",
        on_timeout={"answers": {"Database": "SQLite", "Features": "Caching"}},
    )
    body["requestId"] = body.pop("request_id").replace("db", "body")
    parsed = Ask.parse(body)
    assert parsed.request_id == "ask_body"
    assert parsed.answerers == ("web:a", "web:b")
    assert Ask.parse(json.loads(json.dumps(parsed.body()))) == parsed


def test_the_configured_default_target_is_read_the_same_way() -> None:
    assert parse_target("Slack:C1/17.5") == Target(platform="slack", channel="C1", thread="17.5")
    with pytest.raises(UnknownTarget, match="target: names no platform"):
        parse_target(":C1")


def test_the_client_refuses_with_the_servers_words_before_sending() -> None:
    body = ask()
    body["questions"][0]["header"] = "Far too long a header"
    with pytest.raises(InvalidRequest) as caught:
        request_body(body["questions"], context="x" * 501)
    with pytest.raises(InvalidQuestion) as server:
        Ask.parse({"questions": body["questions"], "context": "x" * 501})
    assert str(caught.value) == str(server.value)
    assert caught.value.status == 422
    assert caught.value.body["details"] == server.value.details()
    assert request_body(DATABASE["questions"])["request_id"].startswith("ask_")  # type: ignore[arg-type]


# --- over the wire: malformed input is a 4xx, never a 500 -------------------------------


async def post_raw(http: aiohttp.ClientSession, url: str, data: bytes) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    async with http.post(f"{url}/v1/questions", data=data, headers=headers) as response:
        return response.status, await response.json()


@pytest.mark.parametrize(
    ("data", "status", "fragment"),
    [
        (b'{"questions": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", 400, "nested too deeply"),
        (b'{"questions": [], "context": "\xff\xfe"}', 400, "not valid JSON"),
        (b'{"questions": [], "quorum": 1' + b"0" * 5000 + b"}", 400, "not valid JSON"),
        (json.dumps(ask(remind_after_s=math.nan)).encode(), 422, "remind_after_s: must be a"),
        (b'{"remind_after_s": 1' + b"0" * 29 + b"}", 422, "got 1000000000000000000000000000"),
        (json.dumps(ask(timeout_s=1e308)).encode(), 422, "timeout_s: must be a number"),
        (json.dumps(ask(context="\ud800")).encode(), 422, "context: must be valid Unicode"),
        (json.dumps(ask(target=["web"] * 20_000)).encode(), 422, "at most 10 targets"),
    ],
)
async def test_malformed_asks_over_http_are_refused_not_a_server_error(
    service: Service, http: aiohttp.ClientSession, data: bytes, status: int, fragment: str
) -> None:
    got_status, got = await post_raw(http, service.url, data)
    assert got_status == status, got
    assert fragment in got["error"]


async def receive(socket: aiohttp.ClientWebSocketResponse) -> Any:
    message = await socket.receive(timeout=10)
    assert message.type is aiohttp.WSMsgType.TEXT, message
    return json.loads(message.data)


async def test_the_socket_caps_context_like_the_http_route(
    service: Service, http: aiohttp.ClientSession
) -> None:
    frame = {"AskUserQuestion": ask(request_id="ask_long_context")}
    query = {"context": "x" * 5000}
    async with http.ws_connect(f"{service.url}/v1/agent", params=query) as socket:
        await socket.send_json(frame)
        error = await receive(socket)
        assert await receive(socket) == "Interrupt"
    assert error["request_id"] == "ask_long_context"
    assert error["details"] == [
        {
            "location": "context",
            "message": "must be a text of at most 500 characters, got 5000 characters",
        }
    ]


async def test_bad_numbers_in_the_query_are_refused_per_ask_in_the_http_words(
    service: Service, http: aiohttp.ClientSession
) -> None:
    query = {"remind_after_s": "NaN", "timeout_s": "soon", "quorum": "1" + "0" * 29}
    async with http.ws_connect(f"{service.url}/v1/agent", params=query) as socket:
        await socket.send_json({"AskUserQuestion": ask(request_id="ask_nan")})
        error = await receive(socket)
        assert await receive(socket) == "Interrupt"
    body = ask(request_id="ask_nan", remind_after_s=math.nan, timeout_s="soon", quorum=10**29)
    sent = http.post(f"{service.url}/v1/questions", data=json.dumps(body), headers=JSON)
    async with sent as response:
        assert response.status == 422
        assert error["error"] == (await response.json())["error"]
    assert [d["location"] for d in error["details"]] == ["timeout_s", "quorum", "remind_after_s"]


async def test_a_frame_nested_too_deeply_does_not_end_the_socket(
    service: Service, http: aiohttp.ClientSession
) -> None:
    async with http.ws_connect(f"{service.url}/v1/agent") as socket:
        await socket.send_str('{"AskUserQuestion": {"questions": ' + "[" * 100_000)
        await socket.send_str('{"AskUserQuestion": ' + "[" * 50_000 + "]" * 50_000 + "}")
        await socket.send_json({"AskUserQuestion": ask(request_id="ask_after", questions=[])})
        error = await receive(socket)
    assert error["request_id"] == "ask_after"
    assert "questions: must hold 1-4 questions, got 0" in error["error"]
