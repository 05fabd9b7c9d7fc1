"""Links to Slack's and Discord's own message previewers, for the messages askbridge sends.

`make pictures` captures the messages (docs/images/messages.json) from the emulators the tests
use; each becomes a link that opens it in Slack's Block Kit Builder (its blocks in the URL's
fragment) or in Discohook (the message as a webhook would send it, base64url in `?data=`).
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent.parent
MESSAGES = ROOT / "docs" / "images" / "messages.json"
STATES = {
    "question": "the spec's two questions, waiting",
    "permission": "a tool-permission prompt (Claude Code's Bash, say)",
    "edit": "Claude Code's Edit, its diff with the file's line numbers",
    "answered": "the same request once Ada answered",
}


def block_kit_builder(message: dict[str, Any]) -> str:
    """Slack's Block Kit Builder showing these blocks (no workspace needed to look)."""
    blocks = json.dumps({"blocks": message["blocks"]}, separators=(",", ":"))
    return "https://app.slack.com/block-kit-builder/#" + quote(blocks, safe="")


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
        lines += [f"## {title}", ""]
        for state, words in STATES.items():
            message = captured[surface][state]
            lines += [
                f"- [{words[0].upper()}{words[1:]}]({link(message)}) (opens {previewer})",
                "",
                '    ??? note "The JSON askbridge sent"',
                "",
                "        ```json",
                *(f"        {line}" for line in json.dumps(message, indent=2).splitlines()),
                "        ```",
                "",
            ]
    return "\n".join(lines)


README_LINKS = {
    "slack-question": ("slack", block_kit_builder),
    "discord-question": ("discord", discohook),
}
"""The README's link definitions that show its question in each platform's previewer."""


def readme_links(captured: dict[str, Any]) -> dict[str, str]:
    return {
        name: link(captured[surface]["question"]) for name, (surface, link) in README_LINKS.items()
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
