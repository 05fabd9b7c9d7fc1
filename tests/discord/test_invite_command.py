"""`askbridge discord invite-url`: the link that adds the bot to a server, from the installed
package, before askbridge has ever connected."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from askbridge.bots.cli import main

# Discord's permission bits, as its documentation numbers them (Topics, Permissions).
DOCUMENTED_BITS = {
    "CREATE_INSTANT_INVITE": 0,
    "KICK_MEMBERS": 1,
    "BAN_MEMBERS": 2,
    "ADMINISTRATOR": 3,
    "MANAGE_CHANNELS": 4,
    "MANAGE_GUILD": 5,
    "ADD_REACTIONS": 6,
    "VIEW_AUDIT_LOG": 7,
    "PRIORITY_SPEAKER": 8,
    "STREAM": 9,
    "VIEW_CHANNEL": 10,
    "SEND_MESSAGES": 11,
    "SEND_TTS_MESSAGES": 12,
    "MANAGE_MESSAGES": 13,
    "EMBED_LINKS": 14,
    "ATTACH_FILES": 15,
    "READ_MESSAGE_HISTORY": 16,
    "MENTION_EVERYONE": 17,
    "USE_EXTERNAL_EMOJIS": 18,
    "MANAGE_ROLES": 28,
    "MANAGE_WEBHOOKS": 29,
    "USE_APPLICATION_COMMANDS": 31,
    "MANAGE_THREADS": 34,
    "CREATE_PUBLIC_THREADS": 35,
    "CREATE_PRIVATE_THREADS": 36,
    "SEND_MESSAGES_IN_THREADS": 38,
}


def named(permissions: int) -> set[str]:
    """The documented names of the bits set in `permissions`; an undocumented bit fails."""
    names = {name for name, bit in DOCUMENTED_BITS.items() if permissions & (1 << bit)}
    known = sum(1 << DOCUMENTED_BITS[name] for name in names)
    assert known == permissions, f"bits beyond the documented ones: {permissions ^ known:b}"
    return names


@pytest.fixture(autouse=True)
def no_env_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no .env of the checkout's
    monkeypatch.delenv("DISCORD_APPLICATION_ID", raising=False)


def test_the_link_asks_for_exactly_the_four_permissions_the_bot_needs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DISCORD_APPLICATION_ID", "1234567890123456789")
    assert main(["discord", "invite-url"]) == 0
    printed = capsys.readouterr()
    assert printed.err == ""
    link = urlsplit(printed.out.strip())
    assert (link.scheme, link.netloc, link.path) == ("https", "discord.com", "/oauth2/authorize")
    query = parse_qs(link.query, strict_parsing=True)
    assert query.keys() == {"client_id", "scope", "permissions"}
    assert query["client_id"] == ["1234567890123456789"]
    assert query["scope"] == ["bot"]
    [permissions] = query["permissions"]
    assert named(int(permissions)) == {
        "VIEW_CHANNEL",
        "SEND_MESSAGES",
        "SEND_MESSAGES_IN_THREADS",
        "READ_MESSAGE_HISTORY",
    }


def test_the_decoder_reads_what_it_is_given() -> None:
    assert named(1 << 3) == {"ADMINISTRATOR"}
    with pytest.raises(AssertionError, match="bits beyond"):
        named(1 << 60)


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (None, "set DISCORD_APPLICATION_ID to the application's ID"),
        ("askbridge", "- DISCORD_APPLICATION_ID: Input should be a valid integer"),
        ("0", "- DISCORD_APPLICATION_ID: Input should be greater than 0"),
    ],
)
def test_without_the_application_id_it_names_the_setting(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    value: str | None,
    said: str,
) -> None:
    if value is not None:
        monkeypatch.setenv("DISCORD_APPLICATION_ID", value)
    assert main(["discord", "invite-url"]) == 2
    printed = capsys.readouterr()
    assert printed.out == ""
    assert printed.err.startswith("askbridge discord invite-url: ")
    assert said in printed.err
