"""Links to Slack's and Discord's own message previewers, for the messages askbridge sends.

`make pictures` captures the messages (docs/images/messages.json) from the emulators the tests
use; each becomes a link that opens it in Slack's Block Kit Builder (its blocks, or a modal's
view, in the URL's fragment) or in Discohook (the message as a webhook would send it, base64url
in `?data=`). Teams' Adaptive Cards Designer has no such link: the cards (docs/images/teams-*.json)
are linked as files, to paste into it.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent.parent
IMAGES = ROOT / "docs" / "images"
MESSAGES = IMAGES / "messages.json"
STATES = {
    "question": "two questions (one choice, several choices), waiting",
    "permission": "a tool-permission prompt: Claude Code's Bash, its command",
    "edit": "Claude Code's Edit: its diff, with three lines of context",
    "form": "a typed form (the web page's above): its fields listed, and Fill in…",
    "answered": "the two questions once Ada answered",
}
"""What each captured message is, in the order the docs show them."""
SLACK_STATES = {
    **{state: STATES[state] for state in ("question", "permission", "edit", "form")},
    "form-modal": "the modal its Fill in… opens: each field as Slack's own input",
    "answered": STATES["answered"],
}
"""Slack's, with the modal a typed form's Fill in… opens."""
TEAMS_CARDS = {
    "question": STATES["question"],
    "form": "the same typed form, each field as the card's own input",
    "edit": STATES["edit"],
}
"""The Teams cards `make pictures` keeps, by name (docs/images/teams-NAME.json)."""
DESIGNER = "https://adaptivecards.io/designer/"


def teams_card_path(name: str) -> Path:
    return IMAGES / f"teams-{name}.json"


def block_kit_builder(message: dict[str, Any]) -> str:
    """Slack's Block Kit Builder showing these blocks, or this modal when `message` is a view
    (`{"type": "modal", ...}`, which the Builder opens as a modal); no workspace needed to
    look."""
    shown = message if message.get("type") == "modal" else {"blocks": message["blocks"]}
    return "https://app.slack.com/block-kit-builder/#" + quote(
        json.dumps(shown, separators=(",", ":")), safe=""
    )


def discohook(message: dict[str, Any]) -> str:
    """Discohook's editor showing this message."""
    data = json.dumps({"messages": [{"data": message}]}, separators=(",", ":"))
    encoded = base64.urlsafe_b64encode(data.encode()).decode().rstrip("=")
    return f"https://discohook.app/?data={encoded}"


def previews_page() -> str:
    captured = json.loads(MESSAGES.read_text())
    lines = []
    for surface, title, link, previewer in (
        ("slack", "Slack", block_kit_builder, "Block Kit Builder"),
        ("discord", "Discord", discohook, "Discohook"),
    ):
        lines += [f"### {title}", ""]
        states = SLACK_STATES if surface == "slack" else STATES
        for state, words in states.items():
            message = captured[surface][state]
            lines += [
                f"- [{_sentence(words)}]({link(message)}) (opens {previewer})",
                "",
                *_json_note("The JSON askbridge sent", message),
            ]
        if surface == "discord":
            lines += [
                "Fill in… opens a Discord modal, one text input or menu per field; Discohook"
                " shows messages only, not modals.",
                "",
            ]
    lines += [
        "### Microsoft Teams",
        "",
        "The Adaptive Cards askbridge posts in a Teams channel. The [Adaptive Cards Designer]"
        f"({DESIGNER}) has no link that opens a card: open the card's file, copy it all, and"
        " paste it into the Designer's **Card Payload Editor** (with **Select host app**:"
        " Microsoft Teams) to see it drawn.",
        "",
    ]
    for name, words in TEAMS_CARDS.items():
        path = teams_card_path(name)
        card = json.loads(path.read_text())
        lines += [
            f"- {_sentence(words)}: [{path.name}](../images/{path.name})"
            f" (`{path.relative_to(ROOT)}` in the repository)",
            "",
            *_json_note("The card askbridge posted", card),
        ]
    return "\n".join(lines)


def _sentence(words: str) -> str:
    return words[0].upper() + words[1:]


def _json_note(title: str, payload: Any) -> list[str]:
    return [
        f'    ??? note "{title}"',
        "",
        "        ```json",
        *(f"        {line}" for line in json.dumps(payload, indent=2).splitlines()),
        "        ```",
        "",
    ]


README_LINKS = {
    "slack-question": ("slack", "question", block_kit_builder),
    "discord-question": ("discord", "question", discohook),
    "slack-edit": ("slack", "edit", block_kit_builder),
    "discord-edit": ("discord", "edit", discohook),
}
"""The README's link definitions that show its question and its Edit approval in each
platform's previewer."""


def readme_links(captured: dict[str, Any]) -> dict[str, str]:
    return {
        name: link(captured[surface][message])
        for name, (surface, message, link) in README_LINKS.items()
    }


def with_readme_links(readme: str, captured: dict[str, Any]) -> str:
    """The README with its previewer links pointing at these messages."""
    for name, url in readme_links(captured).items():
        readme, found = re.subn(
            rf"^\[{name}\]: .*$", f"[{name}]: {url}", readme, flags=re.MULTILINE
        )
        if found != 1:
            raise ValueError(f"README.md has no link definition [{name}]: to update")
    return readme
