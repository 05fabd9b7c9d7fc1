"""`askbridge hook claude-code --install FILE` and `--uninstall FILE`: askbridge's hooks merged
into a Claude Code settings file and taken out again, the rest of the file kept."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

import pytest

from askbridge.bots.cli import main

URL = ("--url", "http://127.0.0.1:8765")
OWN: dict[str, Any] = {
    "permissions": {"allow": ["Bash(npm test *)"], "deny": ["Read(./.env)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]},
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
    "model": "opus",
}
"""A project's settings before askbridge: rules, hooks of its own, on events askbridge uses
and others."""


@pytest.fixture(autouse=True)
def no_askbridge_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("ASKBRIDGE_")]:
        monkeypatch.delenv(name)


def commands(settings: dict[str, Any], event: str) -> list[str]:
    return [h["command"] for g in settings["hooks"].get(event, ()) for h in g["hooks"]]


def askbridge_targets(settings: dict[str, Any]) -> list[str]:
    """The --target of each of askbridge's hooks ("" for none: the server's default)."""
    found = []
    for event in settings["hooks"].values():
        for group in event:
            for one in group["hooks"]:
                args = shlex.split(one["command"])
                if "claude-code" in args:
                    named = args.index("--target") + 1 if "--target" in args else 0
                    found.append(args[named] if named else "")
    return found


def test_installing_keeps_the_files_own_settings_and_hooks_and_twice_is_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / ".claude" / "settings.json"
    file.parent.mkdir()
    file.write_text(json.dumps(OWN, indent=4))
    assert main(["hook", "claude-code", *URL, "--target", "web", "--install", str(file)]) == 0
    assert capsys.readouterr().err == (
        "askbridge: wrote askbridge's hooks (PreToolUse, PermissionRequest, Elicitation) "
        f"into {file}\n"
    )
    once = file.read_text()
    settings = json.loads(once)
    assert {k: v for k, v in settings.items() if k != "hooks"} == {
        k: v for k, v in OWN.items() if k != "hooks"
    }
    assert commands(settings, "PreToolUse")[0] == "./lint.sh"
    assert commands(settings, "Stop") == ["notify-send done"]
    assert askbridge_targets(settings) == ["web", "web", "web"]
    printed = main(["hook", "claude-code", *URL, "--target", "web", "--print-settings"])
    assert printed == 0
    block = json.loads(capsys.readouterr().out)
    assert settings["hooks"]["PermissionRequest"] == block["hooks"]["PermissionRequest"]
    assert settings["hooks"]["PreToolUse"][1:] == block["hooks"]["PreToolUse"]

    written = file.stat().st_mtime_ns
    assert main(["hook", "claude-code", *URL, "--target", "web", "--install", str(file)]) == 0
    assert (file.read_text(), file.stat().st_mtime_ns) == (once, written)
    assert capsys.readouterr().err.endswith("is as it was: it already holds these hooks\n")


def test_installing_again_with_other_options_replaces_askbridges_hooks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "settings.json"
    file.write_text(json.dumps(OWN))
    assert main(["hook", "claude-code", *URL, "--target", "web", "--install", str(file)]) == 0
    flags = ("--target", "slack:C0123", "--no-approvals", "--no-elicitations")
    assert main(["hook", "claude-code", *URL, *flags, "--install", str(file)]) == 0
    settings = json.loads(file.read_text())
    assert askbridge_targets(settings) == ["slack:C0123"]
    assert set(settings["hooks"]) == {"PreToolUse", "Stop"}


def test_uninstalling_takes_out_askbridges_hooks_and_nothing_else(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "settings.json"
    # askbridge's hook pasted by hand beside one of the project's, under the same matcher.
    printed = main(["hook", "claude-code", *URL, "--http", "--print-settings"])
    assert printed == 0
    [ours] = json.loads(capsys.readouterr().out)["hooks"]["PreToolUse"][0]["hooks"]
    own = json.loads(json.dumps(OWN))
    own["hooks"]["PreToolUse"][0]["hooks"].append(ours)
    file.write_text(json.dumps(own))
    assert main(["hook", "claude-code", *URL, "--install", str(file)]) == 0

    assert main(["hook", "claude-code", "--uninstall", str(file)]) == 0
    assert json.loads(file.read_text()) == OWN
    assert main(["hook", "claude-code", "--uninstall", str(file)]) == 0
    assert capsys.readouterr().err.endswith("is as it was: it already holds no askbridge hook\n")
    missing = tmp_path / "none.json"
    assert main(["hook", "claude-code", "--uninstall", str(missing)]) == 0
    assert not missing.exists()


def test_a_file_claude_code_cannot_read_is_left_as_it_is_saying_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "settings.json"
    # Claude Code ignores a settings file with comments in it, in silence.
    text = '{\n  // the project\'s rules\n  "model": "opus"\n}\n'
    file.write_text(text)
    assert main(["hook", "claude-code", *URL, "--install", str(file)]) == 1
    error = capsys.readouterr().err
    assert error.startswith(f"askbridge: {file} is not JSON, as Claude Code needs it (")
    assert file.read_text() == text
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]


def test_a_settings_file_that_is_a_link_stays_one(tmp_path: Path) -> None:
    kept = tmp_path / "dotfiles" / "claude-settings.json"
    kept.parent.mkdir()
    kept.write_text(json.dumps(OWN))
    kept.chmod(0o600)
    link = tmp_path / "settings.json"
    link.symlink_to(kept)
    assert main(["hook", "claude-code", *URL, "--install", str(link)]) == 0
    assert link.is_symlink()
    assert askbridge_targets(json.loads(kept.read_text())) == ["", "", ""]
    assert kept.stat().st_mode & 0o777 == 0o600
