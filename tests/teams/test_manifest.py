"""`askbridge teams manifest`: the Teams app package the bot is added to Teams from."""

from __future__ import annotations

import json
import struct
import zipfile
import zlib
from pathlib import Path

import pytest

from askbridge.bots.cli import main

APP_ID = "2f1c3e4a-5b6d-4e7f-8a9b-0c1d2e3f4a5b"


@pytest.fixture
def teams_app(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEAMS_APP_ID", APP_ID)
    monkeypatch.setenv("TEAMS_DEVELOPER_URL", "https://example.org/")


def pixels(png: bytes) -> tuple[int, list[bytes]]:
    """The size and RGBA pixels of a PNG as `manifest._png` writes it (one IDAT, no filters)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    chunks: dict[bytes, bytes] = {}
    at = 8
    while at < len(png):
        (length,) = struct.unpack(">I", png[at : at + 4])
        kind, data = png[at + 4 : at + 8], png[at + 8 : at + 8 + length]
        (crc,) = struct.unpack(">I", png[at + 8 + length : at + 12 + length])
        assert crc == zlib.crc32(kind + data)
        chunks[kind] = data
        at += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (width, depth, colour) == (height, 8, 6)
    raw = zlib.decompress(chunks[b"IDAT"])
    row = 1 + 4 * width
    found = [
        raw[y * row + 1 + 4 * x : y * row + 5 + 4 * x] for y in range(height) for x in range(width)
    ]
    return width, found


@pytest.mark.usefixtures("teams_app")
def test_the_manifest_names_the_bot_and_its_developer(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["teams", "manifest"]) == 0
    manifest = json.loads(capsys.readouterr().out)
    assert manifest["id"] == APP_ID
    assert [bot["botId"] for bot in manifest["bots"]] == [APP_ID]
    assert set(manifest["bots"][0]["scopes"]) == {"personal", "team", "groupChat"}
    assert manifest["developer"]["websiteUrl"] == "https://example.org"
    assert manifest["icons"] == {"color": "color.png", "outline": "outline.png"}
    assert manifest["manifestVersion"] == "1.17"
    assert len(manifest["version"].split(".")) == 3
    assert len(manifest["description"]["short"]) <= 80


@pytest.mark.usefixtures("teams_app")
def test_the_app_package_zips_the_manifest_and_its_icons(tmp_path: Path) -> None:
    package = tmp_path / "askbridge-teams.zip"
    assert main(["teams", "manifest", "--zip", str(package)]) == 0
    with zipfile.ZipFile(package) as archive:
        assert archive.namelist() == ["manifest.json", "color.png", "outline.png"]
        manifest = json.loads(archive.read("manifest.json"))
        color, outline = archive.read("color.png"), archive.read("outline.png")
    assert manifest["id"] == APP_ID
    size, shown = pixels(color)
    assert size == 192
    assert {pixel[3] for pixel in shown} == {255}
    size, shown = pixels(outline)
    assert size == 32
    # Teams takes an outline icon of white and transparent pixels only.
    assert set(shown) == {b"\xff\xff\xff\xff", b"\x00\x00\x00\x00"}


@pytest.mark.parametrize(
    ("variables", "named"),
    [
        ({"TEAMS_DEVELOPER_URL": "https://example.org"}, "TEAMS_APP_ID"),
        ({"TEAMS_APP_ID": "my-bot", "TEAMS_DEVELOPER_URL": "https://example.org"}, "TEAMS_APP_ID"),
        ({"TEAMS_APP_ID": APP_ID}, "TEAMS_DEVELOPER_URL"),
        (
            {"TEAMS_APP_ID": APP_ID, "TEAMS_DEVELOPER_URL": "http://example.org"},
            "TEAMS_DEVELOPER_URL",
        ),
    ],
)
def test_a_manifest_without_what_teams_needs_names_the_setting(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variables: dict[str, str],
    named: str,
) -> None:
    for name in ("TEAMS_APP_ID", "TEAMS_DEVELOPER_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert main(["teams", "manifest"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert named in captured.err
