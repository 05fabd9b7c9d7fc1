"""The largest request, and texts longer than Discord allows, posted through real discord.py."""

from __future__ import annotations

from typing import Any

import aiohttp

from askbridge.bots.service import Service
from tests.emulators.discord import Message
from tests.emulators.discord.components import BUTTON, STRING_SELECT, TEXT_DISPLAY, walk

from .conftest import World, ask, outcome, posted
from .test_answering import ended

COLOURS = ["Red", "Green", "Blue", "Black"]


def largest(request_id: str, *, multi: tuple[bool, ...] = (False,) * 4) -> dict[str, Any]:
    return {
        "request_id": request_id,
        "context": "release agent: preparing 2.0",
        "questions": [
            {
                "question": f"Question number {q}?",
                "header": f"Q{q}",
                "multiSelect": multi[q],
                "options": [
                    {"label": f"{colour} {q}", "description": f"The {colour.lower()} one"}
                    for colour in COLOURS
                ],
            }
            for q in range(4)
        ],
    }


def components(message: Message, kind: int) -> list[dict[str, Any]]:
    return [p.component for p in walk(message.components) if p.component["type"] == kind]


async def test_four_questions_of_four_options_fit_and_work(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator, alice = world.emulator, world.alice
    question = posted(emulator, await ask(http, bridge.url, largest("ask_big")))
    assert emulator.rejections == []
    assert len(components(question, BUTTON)) == 4 * 4 + 2

    for q in range(3):
        chose = await emulator.click(question, alice.id, f"Blue {q}")
        await chose.wait_for_ephemeral(f"**Q{q}**: Blue {q}.")
    last = await emulator.click(question, alice.id, "Black 3")
    await last.wait_for_ephemeral("Press **Submit**")
    await (await emulator.click(question, alice.id, "Submit")).response()

    final = await outcome(http, bridge.url, "ask_big")
    assert final["answers"] == {"Q0": "Blue 0", "Q1": "Blue 1", "Q2": "Blue 2", "Q3": "Black 3"}
    await emulator.wait_for_edit(question.id, ended)
    assert emulator.rejections == []


async def test_four_multi_select_questions_fit(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    body = largest("ask_big_multi", multi=(True, False, True, True))
    question = posted(world.emulator, await ask(http, bridge.url, body))
    assert world.emulator.rejections == []
    selects = components(question, STRING_SELECT)
    assert [s["max_values"] for s in selects] == [4, 4, 4]
    assert [o["description"] for o in selects[0]["options"]] == [
        "The red one",
        "The green one",
        "The blue one",
        "The black one",
    ]


async def test_long_texts_are_shortened_with_an_ellipsis(
    bridge: Service, world: World, http: aiohttp.ClientSession
) -> None:
    emulator = world.emulator
    word = "Supercalifragilistic" * 2  # 40 characters; a label may have 5 such words
    long_label = " ".join([word] * 4)
    body = {
        "request_id": "ask_long",
        "context": "C" * 500,
        "questions": [
            {
                "question": "Q" * 3000 + "?",
                "header": f"Long {q}",
                "multiSelect": q % 2 == 1,
                "options": [
                    {"label": f"{n}{word} {long_label}", "description": "D" * 500} for n in range(4)
                ],
            }
            for q in range(4)
        ],
    }
    question = posted(emulator, await ask(http, bridge.url, body))
    assert emulator.rejections == []

    texts = [c["content"] for c in components(question, TEXT_DISPLAY)]
    assert sum(len(t) for t in texts) <= 4000
    assert texts[0].startswith("CCC")
    assert texts[0].endswith("…")
    assert "QQQ…" in texts[1]
    assert "DDD…" in texts[1]
    for button in components(question, BUTTON):
        assert len(button["label"]) <= 80
    assert any(b["label"].endswith("…") for b in components(question, BUTTON))
    for select in components(question, STRING_SELECT):
        for option in select["options"]:
            assert len(option["label"]) <= 100
            assert option["label"].endswith("…")
            assert option["description"] == "D" * 99 + "…"
    for custom_id in [
        c["custom_id"] for p in walk(question.components) if "custom_id" in (c := p.component)
    ]:
        assert len(custom_id) <= 100

    # Shortened, but still answered with the agent's own labels.
    first = next(b for b in components(question, BUTTON) if b["label"].startswith("0Super"))
    await (await emulator.use_custom_id(question, world.alice.id, first["custom_id"])).response()
    await emulator.wait_for_ephemeral(world.alice.id, "Still to answer")
    assert (await outcome(http, bridge.url, "ask_long", wait=0))["status"] == "waiting"
