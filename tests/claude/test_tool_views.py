"""The real `claude` CLI's approvals as people see them: an Edit as a diff with the file's own
line numbers, a command verbatim, in Slack, in Discord and on the web page in Chromium.

The model reads a file of the test project and edits it (the CLI refuses an Edit of a file it
has not read), then runs a two-line command. The command hook asks in Slack and Discord at
once; the assertions read what the emulators received and what Chromium shows.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import aiohttp
from playwright.async_api import Browser

from tests.claude.cli import ClaudeRun, Sandbox
from tests.claude.fake_anthropic import ToolUse, Turn, in_order, result_text
from tests.claude.scenario import StartFake, next_waiting, printed_settings, result_of
from tests.conftest import StartService, audit_events
from tests.discord.conftest import check_discord_was_never_let_down, discord_env
from tests.emulators.discord import DiscordEmulator
from tests.emulators.slack import SlackEmulator
from tests.slack.conftest import CHANNEL, TARGET, slack_settings, start_bridge

Claude = Callable[..., ClaudeRun]
SETTINGS = "".join(f"# setting {n}\n" for n in range(1, 18)) + "DEBUG = True\nPORT = 8000\n"
NEW = "DEBUG = False  # <!channel> @everyone"
COMMAND = "echo one\necho two > two.txt"
REASON = "use the staging database"
ARTIFACTS = "ASKBRIDGE_TEST_ARTIFACTS"
"""A folder that keeps the web page's screenshot after the test (CI uploads it)."""


async def test_an_edit_shows_as_a_diff_and_a_command_verbatim_on_every_surface(
    start_service: StartService,
    http: aiohttp.ClientSession,
    sandbox: Sandbox,
    start_fake: StartFake,
    claude: Claude,
    browser: Browser,
    tmp_path: Path,
) -> None:
    target = sandbox.project / "app" / "settings.py"
    target.parent.mkdir()
    target.write_text(SETTINGS)
    read = ToolUse("Read", {"file_path": str(target)})
    edit = ToolUse(
        "Edit", {"file_path": str(target), "old_string": "DEBUG = True", "new_string": NEW}
    )
    bash = ToolUse("Bash", {"command": COMMAND, "description": "Write two lines"})
    fake = await start_fake(in_order(Turn(tools=(read,)), Turn(tools=(edit,)), Turn(tools=(bash,))))
    async with SlackEmulator() as slack, DiscordEmulator(bot_username="askbridge-bot") as discord:
        slack.add_user("U1", "alice")
        slack.add_channel(CHANNEL, "general")
        guild = discord.add_guild("team")
        channel = discord.add_text_channel(guild.id, "approvals")
        bob = discord.add_user("bob", global_name="Bob")
        discord.add_member(guild.id, bob.id)
        connections = slack.socket.connections_total
        service = await start_service(**slack_settings(slack, "socket"), **discord_env(discord))
        await slack.wait_socket_connected(after=connections)
        targets = ("--target", f"slack:{CHANNEL}", "--target", f"discord:{channel.id}")
        settings = await printed_settings(sandbox, service.url, *targets)
        run = claude(fake.url)
        await run.start("Turn debugging off.", settings)

        seen: set[str] = set()
        approval = await next_waiting(service.broker, seen)
        slack_ref, discord_ref = approval.messages
        in_slack = slack.message(CHANNEL, slack_ref.message_id).visible_text
        in_discord = discord.message(int(discord_ref.message_id)).text
        diff = ["@@ -15,5 +15,5 @@", " # setting 15", " # setting 16", " # setting 17"]
        diff += ["-DEBUG = True", f"+{NEW}", " PORT = 8000"]
        assert "*Edit app/settings.py*" in in_slack
        assert "```\n" + "\n".join(diff) + "\n```" in in_slack
        assert "**Edit app/settings.py**" in in_discord
        assert "```diff\n" + "\n".join(diff).replace("@everyone", "@\u200beveryone") in in_discord
        for shown in (in_slack, in_discord):
            assert "\\n" not in shown
            assert '"old_string"' not in shown
        assert not slack.message(CHANNEL, slack_ref.message_id).mentions.broadcasts
        assert not discord.message(int(discord_ref.message_id)).pings.everyone

        page = await browser.new_page()
        await page.goto(f"{service.url}/q/{approval.request_id}")
        removed = await page.locator("table.diff tr.del").all_inner_texts()
        added = await page.locator("table.diff tr.add").all_inner_texts()
        assert [r.split() for r in removed] == [["18", "-", "DEBUG", "=", "True"]]
        assert [a.split("\t")[-1] for a in added] == [NEW]
        assert await page.locator("table.diff tr.add td.num").all_inner_texts() == ["", "18"]
        colour = await page.locator("table.diff tr.add").evaluate(
            "row => getComputedStyle(row).backgroundColor"
        )
        assert colour not in ("rgba(0, 0, 0, 0)", "transparent")
        assert "```" not in await page.inner_text("body")
        folder = os.environ.get(ARTIFACTS) or str(tmp_path)
        # Playwright makes the folder when it writes the file.
        await page.screenshot(path=os.path.join(folder, "edit-approval.png"), full_page=True)

        await (await discord.click(int(discord_ref.message_id), bob.id, "Allow once")).response()

        command = await next_waiting(service.broker, seen)
        slack_ref, discord_ref = command.messages
        in_slack = slack.message(CHANNEL, slack_ref.message_id).visible_text
        in_discord = discord.message(int(discord_ref.message_id)).text
        assert f"```\n{COMMAND}\n```" in in_slack
        assert f"**Run a command**\n```\n{COMMAND}\n```" in in_discord
        assert "Write two lines" in in_slack
        assert f"Working directory*: {sandbox.project}" in in_slack
        # Deny with a reason: the note form, Deny chosen, the reason typed.
        alice = slack.person("U1")
        message = slack.message(CHANNEL, slack_ref.message_id)
        (await alice.click_button(message, "Add a note")).assert_acked()
        form = await slack.wait_for_view("U1", after=0)
        sent = await alice.submit_view(form, choose={"Permission": ["Deny"]}, text={"note": REASON})
        sent.assert_sent()
        await run.result()
        final = await slack.wait_for_update(
            CHANNEL, slack_ref.message_id, lambda m: not m.has_interactive_elements
        )
        # The message says who denied it and why; so does the audit trail.
        assert f"Note from <@U1>: {REASON}" in final.visible_text
        async with http.get(f"{service.url}/v1/questions/{command.request_id}") as response:
            status = await response.json()
        assert status["notes"] == {"Permission": REASON}
        vote = [
            e
            for e in await audit_events(http, service.url, command.request_id)
            if e["kind"] == "vote"
        ]
        assert vote[0]["data"]["notes"] == {"Permission": REASON}
        await check_discord_was_never_let_down(discord)

    assert not result_of(fake, edit).get("is_error")
    assert target.read_text() == SETTINGS.replace("DEBUG = True", NEW)
    assert result_text(result_of(fake, bash)) == f"Denied by alice: {REASON}"
    assert not (sandbox.project / "two.txt").exists()


async def test_an_mcp_tool_names_its_server_and_lists_its_arguments_in_slack(
    start_service: StartService,
    http: aiohttp.ClientSession,
    sandbox: Sandbox,
    start_fake: StartFake,
    claude: Claude,
    tmp_path: Path,
) -> None:
    config = tmp_path / "mcp.json"
    server = {"command": sys.executable, "args": [str(Path(__file__).with_name("tiny_mcp.py"))]}
    config.write_text(json.dumps({"mcpServers": {"tickets": server}}))
    body = "Steps:\n1. run `make` <!here>\n2. see it fail"
    call = ToolUse("mcp__tickets__create_ticket", {"title": "Build fails", "body": body})
    fake = await start_fake(in_order(Turn(tools=(call,))))
    async with SlackEmulator() as slack:
        slack.add_user("U1", "alice")
        slack.add_channel(CHANNEL, "general")
        bridge = await start_bridge(slack, "socket", start_service, http)
        settings = await printed_settings(sandbox, bridge.url, "--target", TARGET)
        run = claude(fake.url)
        await run.start("File the bug.", settings, ("--mcp-config", str(config)))

        approval = await next_waiting(bridge.service.broker, set())
        message = slack.message(CHANNEL, approval.messages[0].message_id)
        shown = message.visible_text
        assert "*Use the MCP tool create_ticket of the server tickets*" in shown
        # Each argument by its name, its text as written: real line breaks, no JSON.
        assert "• *title*: Build fails" in shown
        assert f"• *body*: {body}" in shown
        assert '"body"' not in shown
        assert not message.mentions.broadcasts
        (await slack.person("U1").click_button(message, "Allow once")).assert_acked()
        await run.result()

    assert result_text(result_of(fake, call)) == "Opened ticket T-1: Build fails"


async def test_a_write_shows_its_diff_or_its_new_file_and_writes_once_allowed(
    start_service: StartService,
    sandbox: Sandbox,
    start_fake: StartFake,
    claude: Claude,
) -> None:
    existing = sandbox.project / "config.toml"
    existing.write_text("name = 'app'\nport = 8000\ndebug = true\n")
    overwritten = "name = 'app'\nport = 9000  # <!here>\ndebug = true\n"
    fresh = sandbox.project / "docs" / "NOTES.md"
    fresh.parent.mkdir()
    written = "# Notes\n@everyone read this\n"
    read = ToolUse("Read", {"file_path": str(existing)})
    overwrite = ToolUse("Write", {"file_path": str(existing), "content": overwritten})
    create = ToolUse("Write", {"file_path": str(fresh), "content": written})
    turns = (Turn(tools=(read,)), Turn(tools=(overwrite,)), Turn(tools=(create,)))
    fake = await start_fake(in_order(*turns))
    async with SlackEmulator() as slack, DiscordEmulator(bot_username="askbridge-bot") as discord:
        slack.add_user("U1", "alice")
        slack.add_channel(CHANNEL, "general")
        guild = discord.add_guild("team")
        channel = discord.add_text_channel(guild.id, "approvals")
        bob = discord.add_user("bob", global_name="Bob")
        discord.add_member(guild.id, bob.id)
        connections = slack.socket.connections_total
        service = await start_service(**slack_settings(slack, "socket"), **discord_env(discord))
        await slack.wait_socket_connected(after=connections)
        targets = ("--target", f"slack:{CHANNEL}", "--target", f"discord:{channel.id}")
        settings = await printed_settings(sandbox, service.url, *targets)
        run = claude(fake.url)
        await run.start("Move the port, then write notes.", settings)

        seen: set[str] = set()
        approval = await next_waiting(service.broker, seen)
        slack_ref, discord_ref = approval.messages
        message = slack.message(CHANNEL, slack_ref.message_id)
        # The file as it is on the agent's machine, against what the Write puts there.
        diff = (
            "@@ -1,3 +1,3 @@\n name = 'app'\n-port = 8000\n+port = 9000  # <!here>\n debug = true"
        )
        assert "*Overwrite config.toml*" in message.visible_text
        assert f"```\n{diff}\n```" in message.visible_text
        assert '"content"' not in message.visible_text
        assert not message.mentions.broadcasts
        (await slack.person("U1").click_button(message, "Allow once")).assert_acked()

        approval = await next_waiting(service.broker, seen)
        _, discord_ref = approval.messages
        shown = discord.message(int(discord_ref.message_id))
        assert "**Write docs/NOTES.md**" in shown.text
        assert "**A new file**" in shown.text
        assert "```diff\n@@ -0,0 +1,2 @@\n+# Notes\n+@\u200beveryone read this\n```" in shown.text
        assert not shown.pings.everyone
        await (await discord.click(int(discord_ref.message_id), bob.id, "Allow once")).response()
        await run.result()
        await check_discord_was_never_let_down(discord)

    assert not result_of(fake, overwrite).get("is_error")
    assert not result_of(fake, create).get("is_error")
    assert existing.read_text() == overwritten
    assert fresh.read_text() == written
