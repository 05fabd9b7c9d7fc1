"""HTTP and the agent WebSocket accept and refuse exactly the same asks, in the same words.

Asks are drawn from valid ones with mutations (fields dropped, oversized, mistyped, bad
numbers, lone surrogates, too many questions, options or targets, long context…). Each is
sent to one running server twice: as the body of `POST /v1/questions`, and as an
`AskUserQuestion` frame on `/v1/agent` with the settings in the query string (the only way
the socket takes them). Either both accept it, or both refuse it with the same `error` and
`details`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import reprlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from askbridge.bots.service import Service
from askbridge.core.ask import MAX_SECONDS
from tests.conftest import waiting_ids

ABSENT = object()

words = st.sampled_from(["alpha", "beta", "gamma", "delta", "Ärger", "café", "ok", "new", "old"])
labels = st.lists(words, min_size=1, max_size=3).map(" ".join)


@st.composite
def valid_questions(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(min_value=1, max_value=4))
    questions = []
    for index in range(count):
        names = draw(st.lists(labels, min_size=2, max_size=4, unique=True))
        questions.append(
            {
                "question": f"Which {draw(words)}?",
                "header": f"H{index}",
                draw(st.sampled_from(["multiSelect", "multi_select"])): draw(st.booleans()),
                "options": [{"label": n, "description": f"about {n}"} for n in names],
            }
        )
    return questions


def _whole(draw: st.DrawFn, questions: Any) -> Any:
    return draw(
        st.sampled_from(
            [
                ABSENT,
                [],
                {"question": "x"},
                "x",
                7,
                None,
                [*questions, *questions, *questions, *questions, *questions]
                if isinstance(questions, list)
                else questions,
            ]
        )
    )


def _question(draw: st.DrawFn, questions: Any) -> Any:
    if not isinstance(questions, list) or not questions:
        return questions
    question = draw(st.sampled_from(questions))
    if not isinstance(question, dict):
        return questions
    field = draw(st.sampled_from(["question", "header", "options", "multiSelect", "icon"]))
    values: dict[str, list[Any]] = {
        "question": ["", "  ", "Go\ud800?", 7, None, ABSENT],
        "header": ["", "Thirteen char", "exactly12chr", "H0", 7, "H\udc00", ABSENT],
        "options": [[], [{"label": "one"}], [{"label": f"o{i}"} for i in range(5)], "x", [7]],
        "multiSelect": [True, False, "yes", 7],
        "icon": ["db"],
    }
    value = draw(st.sampled_from(values[field]))
    if value is ABSENT:
        question.pop(field, None)
    else:
        question[field] = value
    return questions


def _option(draw: st.DrawFn, questions: Any) -> Any:
    if not isinstance(questions, list) or not questions:
        return questions
    question = draw(st.sampled_from(questions))
    options = question.get("options") if isinstance(question, dict) else None
    if not isinstance(options, list) or not options or not isinstance(options[0], dict):
        return questions
    option = draw(st.sampled_from([o for o in options if isinstance(o, dict)]))
    field = draw(st.sampled_from(["label", "description"]))
    values: dict[str, list[Any]] = {
        "label": ["one two three four five six", options[0].get("label"), 7, "\ud83d", "a, b", ""],
        "description": [7, "d\udfff", None, "x" * 300],
    }
    option[field] = draw(st.sampled_from(values[field]))
    return questions


MUTATIONS = [_whole, _question, _question, _option, _option]


SECONDS = (
    [1, 30.5, 600, MAX_SECONDS],
    [MAX_SECONDS + 1, 0, -1, math.nan, math.inf, -math.inf, 1e308, 10**30, "soon", ""],
)
SETTINGS: dict[str, tuple[list[Any], list[Any]]] = {
    # field: (good values, bad values)
    "target": (
        [["web"], ["web", "web"], ["web"] * 10, ["WEB"], [" web "]],
        [
            ["web"] * 11,
            ["web"] * 40,
            ["web:x"],
            ["slack:C1"],
            ["discord:@1"],
            ["telegram:1"],
            [":x"],
            ["web", ":y", "zz:"],
        ],
    ),
    "timeout_s": SECONDS,
    "remind_after_s": SECONDS,
    "quorum": ([1, 2, 50], [51, 0, -3, 2.5, 10**30, math.nan, "two"]),
    "answerers": (
        [
            ["web:Grace", "web:Lin"],
            [" web:Grace ", "web:Lin", "web:Ada"],
            ["slack-group:S1"],
            [f"web:p{i}" for i in range(50)],
        ],
        [["web:Grace"], ["bob"], ["web:Grace", "bad entry"], [f"web:p{i}" for i in range(51)]],
    ),
    "context": (
        ["deploy-bot", "é" * 500, "line\nbreak", "emoji 👍🏽"],
        ["x" * 501, "x" * 5000, "a\x00b"],
    ),
}
REQUEST_IDS = (
    ["absent", "fresh", "camel", "longest", None],
    ["has spaces", "x" * 65, 7, "", "ask_\ud800", ["a"], ".", ".."],
)


@dataclass
class Case:
    questions: Any
    request_id: Any
    settings: dict[str, Any]

    def http_body(self, fresh: str) -> dict[str, Any]:
        body = {**self._frame(fresh), **self.settings}
        if "target" in body and len(body["target"]) == 1:
            body["target"] = body["target"][0]  # as the socket reads one target
        return body

    def frame(self, fresh: str) -> dict[str, Any]:
        return {"AskUserQuestion": self._frame(fresh)}

    def query(self) -> dict[str, str]:
        """The settings as query-string text, the only way the socket takes them."""
        query = {}
        for key, value in self.settings.items():
            if isinstance(value, list):
                query[key] = ",".join(value)
            elif isinstance(value, str):
                query[key] = value
            else:
                query[key] = json.dumps(value)
        return query

    def _frame(self, fresh: str) -> dict[str, Any]:
        frame: dict[str, Any] = {}
        if self.questions is not ABSENT:
            frame["questions"] = self.questions
        if self.request_id == "fresh":
            frame["request_id"] = fresh
        elif self.request_id == "camel":
            frame["requestId"] = fresh
        elif self.request_id == "longest":
            frame["request_id"] = fresh.ljust(64, "x")
        elif self.request_id != "absent":
            frame["request_id"] = self.request_id
        return frame


@pytest.fixture
def numbers() -> Iterator[int]:
    """Fresh request ids for every example of one test."""
    return itertools.count()


@st.composite
def asks(draw: st.DrawFn) -> Case:
    """A valid ask with none, one or a few of its fields spoiled."""
    count = draw(st.sampled_from([0, 0, 0, 1, 1, 2, 3]))
    fields = ["questions", "request_id", *SETTINGS]
    spoiled = draw(st.lists(st.sampled_from(fields), min_size=count, max_size=count))
    questions: Any = draw(valid_questions())
    for _ in range(spoiled.count("questions")):
        questions = draw(st.sampled_from(MUTATIONS))(draw, questions)
    good, bad = REQUEST_IDS
    request_id = draw(st.sampled_from(bad if "request_id" in spoiled else good))
    settings = {}
    for key, (good, bad) in SETTINGS.items():
        if key in spoiled:
            settings[key] = draw(st.sampled_from(bad))
        elif draw(st.booleans()):
            settings[key] = draw(st.sampled_from(good))
    return Case(questions, request_id, settings)


def brief(value: Any) -> str:
    short = reprlib.Repr()
    short.maxstring, short.maxlevel, short.maxlist = 60, 6, 12
    return short.repr(value)


async def withdraw_all(http: aiohttp.ClientSession, url: str) -> None:
    async with http.get(f"{url}/v1/questions?status=waiting") as response:
        waiting = (await response.json())["questions"]
    for question in waiting:
        async with http.delete(f"{url}/v1/questions/{question['request_id']}") as response:
            assert response.status == 200


async def receive(socket: aiohttp.ClientWebSocketResponse) -> Any:
    message = await socket.receive(timeout=10)
    assert message.type is aiohttp.WSMsgType.TEXT, message
    return json.loads(message.data)


async def over_socket(
    http: aiohttp.ClientSession, url: str, query: dict[str, str], frame: dict[str, Any]
) -> dict[str, Any] | None:
    """The error frame the socket answers with, or None when it accepted the ask."""
    async with http.ws_connect(f"{url}/v1/agent", params=query) as socket:
        await socket.send_json(frame)
        answer = asyncio.create_task(receive(socket))
        created = asyncio.create_task(waiting_ids(http, url))
        await asyncio.wait({answer, created}, return_when=asyncio.FIRST_COMPLETED)
        if answer.done():
            created.cancel()
            assert await receive(socket) == "Interrupt"
            error: dict[str, Any] = answer.result()
            return error
        async with http.delete(f"{url}/v1/questions/{created.result()[0]}") as response:
            assert response.status == 200
        assert await answer == "Interrupt"
        return None


@settings(
    max_examples=200,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(asks())
async def test_http_and_the_socket_accept_and_refuse_the_same_asks(
    service: Service, http: aiohttp.ClientSession, numbers: Iterator[int], case: Case
) -> None:
    number = next(numbers)
    body = case.http_body(f"ask_h{number}")
    note(f"HTTP body: {brief(body)}\nquery: {brief(case.query())}")
    async with http.post(f"{service.url}/v1/questions", json=body) as response:
        status, created = response.status, await response.json()
    await withdraw_all(http, service.url)
    event(f"HTTP {status}")
    refused = await over_socket(http, service.url, case.query(), case.frame(f"ask_w{number}"))
    if status == 201:
        assert refused is None, refused
        return
    assert status == 422, created
    assert refused is not None, created
    assert refused["error"] == created["error"]
    assert refused.get("details") == created.get("details")
