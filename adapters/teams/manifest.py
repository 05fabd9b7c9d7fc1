"""The Teams app package askbridge's bot is added to Teams from: manifest.json and its two
icons, made from the bot's app id (`askbridge teams manifest`)."""

from __future__ import annotations

import json
import re
import struct
import zlib
from collections.abc import Callable

from askbridge.core.errors import StartupError
from askbridge.core.version import VERSION

SCHEMA = "https://developer.microsoft.com/en-us/json-schemas/teams/v1.17/MicrosoftTeams.schema.json"
ACCENT = (0x4F, 0x52, 0xB2)
GUID = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")


def package(app_id: str | None, developer_url: str | None) -> dict[str, bytes]:
    """The files of the app package, manifest.json first. StartupError names the setting
    that is missing or malformed."""
    if not app_id or not GUID.fullmatch(app_id):
        raise StartupError(
            "TEAMS_APP_ID must be the bot's Microsoft Entra application (client) id, a GUID "
            "such as 00000000-0000-0000-0000-000000000000; see docs/tutorials/teams.md"
        )
    if not developer_url or not developer_url.startswith("https://"):
        raise StartupError(
            "TEAMS_DEVELOPER_URL must be your organisation's https:// site: Teams shows it as "
            "the app's developer, with its privacy and terms pages"
        )
    site = developer_url.rstrip("/")
    manifest = {
        "$schema": SCHEMA,
        "manifestVersion": "1.17",
        "version": _app_version(VERSION),
        "id": app_id,
        "developer": {
            "name": "askbridge",
            "websiteUrl": site,
            "privacyUrl": site,
            "termsOfUseUrl": site,
        },
        "name": {"short": "askbridge", "full": "askbridge: questions from AI agents"},
        "description": {
            "short": "Answer the questions and tool approvals of AI agents.",
            "full": "askbridge posts the multiple-choice questions and tool approvals of AI "
            "agents as cards; pick an answer and the waiting agent goes on with it.",
        },
        "icons": {"color": "color.png", "outline": "outline.png"},
        "accentColor": "#{:02X}{:02X}{:02X}".format(*ACCENT),
        "bots": [
            {
                "botId": app_id,
                "scopes": ["personal", "team", "groupChat"],
                "isNotificationOnly": False,
                "supportsFiles": False,
            }
        ],
        "permissions": ["identity", "messageTeamMembers"],
        "validDomains": [],
    }
    return {
        "manifest.json": (json.dumps(manifest, indent=2) + "\n").encode(),
        "color.png": _png(192, lambda x, y: (*ACCENT, 255)),
        # Teams wants the outline icon white on transparent.
        "outline.png": _png(32, _ring),
    }


def _app_version(version: str) -> str:
    """Teams takes a version of three numbers."""
    numbers = re.findall(r"\d+", version)[:3]
    return ".".join([*numbers, "0", "0", "0"][:3])


def _ring(x: int, y: int) -> tuple[int, int, int, int]:
    edge = min(x, y, 31 - x, 31 - y)
    return (255, 255, 255, 255) if 3 <= edge <= 5 else (0, 0, 0, 0)


def _png(size: int, pixel: Callable[[int, int], tuple[int, int, int, int]]) -> bytes:
    """A square RGBA PNG, written without an imaging library."""
    rows = b"".join(
        b"\x00" + b"".join(bytes(pixel(x, y)) for x in range(size)) for y in range(size)
    )
    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(rows, 9))
        + _chunk(b"IEND", b"")
    )


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
