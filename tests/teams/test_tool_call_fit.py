"""A tool call the card's size cuts (`fit`) links to all of it, as one its own limits cut does:
an approver is told, and can see exactly what they approve; the link itself is never cut."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from askbridge.adapters.teams.fit import MAX_CARD_BYTES, fit, fits, sent_size
from askbridge.adapters.teams.render import render
from askbridge.adapters.teams.text import plain
from askbridge.adapters.teams.tool_call import (
    BLOCK_BUDGET,
    MAX_FIELDS,
    MAX_LINES,
    MAX_PARTS,
    MAX_VALUE,
)
from askbridge.core.models import Request, Status
from askbridge.core.tool_view import FULL_VIEW, is_cut
from askbridge.core.view import RequestView
from tests.emulators.teams.cards import check_card
from tests.teams.test_hostile_text import ROCKET, approval

PAGE = "https://askbridge.example.com/q/r1?token=" + "0" * 64
WIDE = "\n".join(["echo " + ROCKET * 60] * 35)
"""2,310 characters in 35 lines, within what a card shows of a command, but 25 KB as sent."""


def linked(request: Request) -> Request:
    assert request.tool is not None
    tool = request.tool.model_copy(update={"full_view": PAGE})
    return request.model_copy(update={"tool": tool})


def opened(card: Any) -> Iterator[dict[str, Any]]:
    """Every Action.OpenUrl on the card, however deep."""
    if isinstance(card, dict):
        if card.get("type") == "Action.OpenUrl":
            yield card
        for value in card.values():
            yield from opened(value)
    elif isinstance(card, list):
        for value in card:
            yield from opened(value)


def command_lines(card: dict[str, Any]) -> list[str]:
    return [
        inline["text"]
        for element in card["body"]
        if element["type"] == "RichTextBlock"
        for inline in element["inlines"]
        if inline.get("fontType") == "Monospace"
    ]


def test_a_command_the_card_cuts_to_fit_links_to_its_page() -> None:
    request = linked(approval(WIDE))
    assert request.tool is not None
    # Within the tool call's own limits: only the card's size cuts it.
    limits = (MAX_LINES, BLOCK_BUDGET, MAX_PARTS)
    assert not is_cut(request.tool, *limits, max_fields=MAX_FIELDS, value_chars=MAX_VALUE)
    denied = request.model_copy(
        update={"status": Status.ANSWERED, "answers": {"Permission": "Deny"}}
    )
    assert not RequestView.of(denied).waiting
    for view in (RequestView.of(request), RequestView.of(denied)):
        card = render(view)
        check_card(card)
        lines = command_lines(card)
        assert len(lines) == 35
        assert all(line.endswith("…") for line in lines), lines[0]
        assert list(opened(card)) == [{"type": "Action.OpenUrl", "title": FULL_VIEW, "url": PAGE}]


def test_a_command_the_card_shows_whole_does_not_link() -> None:
    card = render(RequestView.of(linked(approval("echo " + ROCKET * 60))))
    check_card(card)
    assert command_lines(card) == ["echo " + ROCKET * 60]
    assert list(opened(card)) == []


def test_the_link_is_never_cut_however_much_else_is() -> None:
    """A card that fits only with every text cut to about 20 bytes, past where the link's
    title would be cut, keeps the title whole."""
    link: dict[str, Any] = {"type": "Action.OpenUrl", "title": FULL_VIEW, "url": PAGE}
    lines = [plain("x" * 40) for _ in range(MAX_CARD_BYTES // (sent_size(plain("x" * 20)) + 2))]
    card: dict[str, Any] = {
        "type": "AdaptiveCard",
        "version": "1.5",
        "body": [{"type": "ActionSet", "actions": [link]}, *lines],
    }
    fit(card)
    assert fits(card)
    assert len(lines[0]["inlines"][0]["text"]) < len(FULL_VIEW)
    assert link == {"type": "Action.OpenUrl", "title": FULL_VIEW, "url": PAGE}


def test_a_note_cut_to_its_budget_links_to_all_of_the_call() -> None:
    """A lookalike host is quoted in its note: a long one makes a note past what a card shows
    of it, though the URL itself is within its budget. The card cuts the note, and so links."""
    from askbridge.adapters.teams.tool_call import tool_elements
    from askbridge.core.tool_view import Note, ToolUse, tool_view

    host = ".".join(["\u0430pple"] * 71) + ".com"
    url = f"https://{host}/"
    tool = tool_view(ToolUse(name="WebFetch", input={"url": url, "prompt": "Read"}))
    tool = tool.model_copy(update={"full_view": PAGE})
    assert len(url) <= MAX_VALUE < max(len(p.text) for p in tool.parts if isinstance(p, Note))
    assert [a["url"] for a in opened(tool_elements(tool))] == [PAGE]
