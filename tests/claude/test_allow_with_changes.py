"""Edit and allow, against the real `claude` CLI: a person changes the tool call before allowing
it, and what runs is the changed call.

A Bash command changed in Slack's modal: the model reads the changed command's output. An Edit's
new text changed in Discord's modal, and a Write's content changed on the web page in Chromium:
the file holds the changed text. The messages then show the call as it was allowed, and who
changed it; the status object and the audit trail carry the changed input and its digest. A
PreToolUse approval (the HTTP hook) takes a changed command the same way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import aiohttp
from playwright.async_api import Browser

from askbridge.bots.service import Service
from askbridge.core.audit_log import canonical
from tests.claude.cli import ClaudeRun, Sandbox
from tests.claude.fake_anthropic import ToolUse, Turn, in_order, result_text
from tests.claude.scenario import StartFake, next_waiting, printed_settings, result_of
from tests.conftest import StartService, audit_events
from tests.discord.conftest import check_discord_was_never_let_down, discord_env
from tests.emulators.discord import DiscordEmulator
from tests.emulators.slack import SlackEmulator
from tests.slack.conftest import CHANNEL, TARGET, start_bridge
from tests.web_person import change_on_web

Claude = Callable[..., ClaudeRun]
HOSTILE = "<!channel> @everyone <https://evil.example|click>"


def sha256(value: object) -> str:
    return hashlib.sha256(canonical(value)).hexdigest()


async def test_a_command_changed_in_slack_is_the_command_that_runs(
    start_service: StartService,
    http: aiohttp.ClientSession,
    sandbox: Sandbox,
    start_fake: StartFake,
    claude: Claude,
) -> None:
    asked = {"command": f"echo asked > {sandbox.project / 'asked.txt'}", "description": "Write"}
    changed = f"echo 'changed {HOSTILE}'"
    bash = ToolUse("Bash", asked)
    fake = await start_fake(in_order(Turn(tools=(bash,))))
    async with SlackEmulator() as slack:
        slack.add_user("U1", "alice")
        slack.add_channel(CHANNEL, "general")
        bridge = await start_bridge(slack, "socket", start_service, http)
        settings = await printed_settings(sandbox, bridge.url, "--target", TARGET)
        run = claude(fake.url)
        await run.start("Write the file.", settings)

        approval = await next_waiting(bridge.service.broker, set())
        ref = approval.messages[0]
        alice = slack.person("U1")
        (await alice.click_button(slack.message(CHANNEL, ref.message_id), "Edit and allow…"))
        form = await slack.wait_for_view("U1", after=0)
        assert form.title == "Edit and allow"
        assert form.value("changed") == asked["command"]
        (await alice.submit_view(form, text={"changed": changed})).assert_sent()
        await run.result()
        final = await slack.wait_for_update(
            CHANNEL, ref.message_id, lambda m: not m.has_interactive_elements
        )
        shown = final.visible_text
        # What was allowed, and who changed it; the asked command is no longer shown as it.
        assert f"```\n{changed}\n```" in shown
        assert "Changed by alice before it was allowed: this is what runs" in shown
        assert "asked.txt" not in shown
        assert not final.mentions.broadcasts
        async with http.get(f"{bridge.url}/v1/questions/{approval.request_id}") as response:
            status = await response.json()
        assert status["answers"] == {"Permission": "Allow once"}
        assert status["approved_input"] == {**asked, "command": changed}
        assert status["subject_sha256"] == sha256(asked)
        events = await audit_events(http, bridge.url, approval.request_id)
        vote = next(e for e in events if e["kind"] == "vote")
        assert vote["data"]["changed_sha256"] == sha256({**asked, "command": changed})
        answered = next(e for e in events if e["kind"] == "answered")
        assert answered["data"]["subject_sha256"] == sha256(asked)

    # The model read the changed command's output; the asked one never ran.
    assert result_text(result_of(fake, bash)).strip() == f"changed {HOSTILE}"
    assert not (sandbox.project / "asked.txt").exists()


async def test_an_edit_changed_in_discord_writes_the_changed_text(
    start_service: StartService,
    sandbox: Sandbox,
    start_fake: StartFake,
    claude: Claude,
) -> None:
    target = sandbox.project / "settings.py"
    target.write_text("DEBUG = True\nPORT = 8000\n")
    read = ToolUse("Read", {"file_path": str(target)})
    edit = ToolUse(
        "Edit",
        {"file_path": str(target), "old_string": "DEBUG = True", "new_string": "DEBUG = 1"},
    )
    changed = "DEBUG = False  # @everyone said so"
    fake = await start_fake(in_order(Turn(tools=(read,)), Turn(tools=(edit,))))
    async with DiscordEmulator(bot_username="askbridge-bot") as discord:
        guild = discord.add_guild("team")
        channel = discord.add_text_channel(guild.id, "approvals")
        bob = discord.add_user("bob", global_name="Bob")
        discord.add_member(guild.id, bob.id)
        service = await start_service(**discord_env(discord))
        settings = await printed_settings(sandbox, service.url, "--target", f"discord:{channel.id}")
        run = claude(fake.url)
        await run.start("Turn debugging off.", settings)

        approval = await next_waiting(service.broker, set())
        message_id = int(approval.messages[0].message_id)
        opened = await discord.click(message_id, bob.id, "Edit and allow…")
        modal = await opened.modal()
        assert modal.title == "Edit and allow"
        assert modal.field("New text").value == "DEBUG = 1"
        await (await discord.submit_modal(opened, {"New text": changed})).response()
        await run.result()
        final = await discord.wait_for_edit(
            message_id, lambda m: "Changed by Bob" in m.text and not m.is_interactive
        )
        assert f"+{changed}".replace("@everyone", "@\u200beveryone") in final.text
        assert not discord.message(message_id).pings.everyone
        await check_discord_was_never_let_down(discord)

    assert not result_of(fake, edit).get("is_error")
    assert target.read_text() == f"{changed}\nPORT = 8000\n"


async def test_a_write_changed_on_the_web_page_writes_the_changed_content(
    start_service: StartService,
    http: aiohttp.ClientSession,
    sandbox: Sandbox,
    start_fake: StartFake,
    claude: Claude,
    browser: Browser,
) -> None:
    target = sandbox.project / "notes.md"
    asked = "# Notes\n\nFirst draft\n"
    changed = f"# Notes\n\n<script>alert(1)</script> {HOSTILE}\n"
    write = ToolUse("Write", {"file_path": str(target), "content": asked})
    fake = await start_fake(in_order(Turn(tools=(write,))))
    service = await start_service()
    settings = await printed_settings(sandbox, service.url)
    run = claude(fake.url)
    await run.start("Write the notes.", settings)

    approval = await next_waiting(service.broker, set())
    page = await browser.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: dialogs.append(dialog.message))
    await page.goto(f"{service.url}/q/{approval.request_id}")
    field = page.locator("#change textarea[name=changed]")
    assert await field.input_value() == asked
    await field.fill(changed)
    await page.locator("input[name=name]").fill("carol")
    await page.locator("#change button").click()
    await run.result()
    await page.goto(f"{service.url}/q/{approval.request_id}")
    shown = await page.inner_text("#tool")
    assert "Changed by carol before it was allowed: this is what runs" in shown
    added = await page.locator("table.diff tr.add td.code").all_inner_texts()
    assert added == ["# Notes", "", f"<script>alert(1)</script> {HOSTILE}"]
    assert await page.locator("#tool script").count() == 0
    assert dialogs == []

    assert not result_of(fake, write).get("is_error")
    assert target.read_text() == changed


async def test_a_pre_tool_use_approval_runs_the_changed_command_through_the_http_hook(
    service: Service,
    http: aiohttp.ClientSession,
    sandbox: Sandbox,
    start_fake: StartFake,
    claude: Claude,
) -> None:
    asked = sandbox.project / "asked.txt"
    bash = ToolUse("Bash", {"command": f"echo asked > {asked}", "description": "Write"})
    fake = await start_fake(in_order(Turn(tools=(bash,))))
    flags = ("--pre-tool-use", "Bash", "--no-approvals")
    settings = await printed_settings(sandbox, service.url, "--http", *flags)
    run = claude(fake.url)
    await run.start("Write the file.", settings)

    approval = await next_waiting(service.broker, set())
    assert approval.request_id == f"claude_{bash.id}"
    status, _ = await change_on_web(http, service.url, approval.request_id, "echo pre-tool-use")
    assert status == 200
    await run.result()

    assert result_text(result_of(fake, bash)).strip() == "pre-tool-use"
    assert not asked.exists()
    assert run.prompts("Bash") == []
