"""The documentation site: its reference follows the code, and its strict build fails on a
broken link."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest
import yaml

from askbridge.bots.cli import EXIT_STATUSES, _parser
from askbridge.core.api.openapi import openapi_document
from askbridge.core.form_schema import FEW_FIELDS, MAX_FIELDS
from tests.docs.api_reference import api_page
from tests.docs.cli_reference import cli_page, commands, exit_statuses_page
from tests.docs.hooks import MARKER, PARTS, PROJECT_FILES, project_links
from tests.docs.previews import block_kit_builder, discohook
from tests.docs.settings_reference import explained, settings_models, settings_page, variable

ROOT = Path(__file__).resolve().parent.parent


def test_every_setting_is_in_the_settings_reference() -> None:
    page = settings_page()
    names = [
        variable(model, name, field)
        for model in settings_models()
        for name, field in model.model_fields.items()
    ]
    assert "ASKBRIDGE_DATABASE_URL" in names
    assert "SLACK_BOT_TOKEN" in names
    for name in names:
        assert f"| `{name}` |" in page, f"{name} is not in the settings reference"


def test_a_setting_takes_its_meaning_from_the_comment_above_it() -> None:
    example = (
        "# --- Server ----\n"
        "# Address to listen on.\n"
        "# Loopback only without a token.\n"
        "# ASKBRIDGE_HOST=127.0.0.1\n"
        "# --- Slack (see the Slack tutorial) ----\n"
        "# Bot token.\n"
        "SLACK_BOT_TOKEN=\n"
    )
    assert explained(example) == {
        "ASKBRIDGE_HOST": ("Server", "Address to listen on. Loopback only without a token."),
        "SLACK_BOT_TOKEN": ("Slack", "Bot token."),
    }


def test_every_operation_of_the_openapi_document_is_in_the_http_reference() -> None:
    page = api_page()
    document = openapi_document()
    for path, operations in document["paths"].items():
        for method in operations:
            assert f"### `{method.upper()} {path}`" in page
    for schema in document["components"]["schemas"]:
        assert f"### {schema}\n" in page


def test_every_command_is_in_the_command_line_reference() -> None:
    page = cli_page()
    found = [parser.prog for parser in commands(_parser())]
    assert "askbridge hook claude-code" in found
    for prog in found:
        assert f"## `{prog}`" in page


def test_the_exit_statuses_in_the_command_line_reference_are_the_commands_own() -> None:
    """`askbridge ask`'s exit statuses are listed from the table its `--help` is made from,
    and none is written by hand beside them."""
    source = (ROOT / "docs" / "reference" / "cli.md").read_text()
    assert "exit-statuses" in [found["name"] for found in MARKER.finditer(source)]
    assert re.findall(r"`[0-9]+`", source) == [], "an exit status written by hand"
    page = PARTS["exit-statuses"]()
    assert page == exit_statuses_page()
    for code, meaning in EXIT_STATUSES:
        assert f"| `{code}` | {meaning} |" in page


def test_the_previewer_links_carry_the_message_itself() -> None:
    message = {"blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "a & b #1"}}]}
    fragment = block_kit_builder(message).split("#", 1)[1]
    assert json.loads(unquote(fragment)) == message
    data = {"content": "Deploy? ✅", "components": [{"type": 1, "components": []}]}
    encoded = discohook(data).split("?data=", 1)[1]
    decoded = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
    assert json.loads(decoded) == {"messages": [{"data": data}]}


def test_the_project_files_link_into_the_site() -> None:
    text = "See [the benchmark](docs/explanation/benchmark.md) and [SECURITY.md](SECURITY.md)."
    assert project_links(text, "project/changelog.md") == (
        "See [the benchmark](../explanation/benchmark.md) and [SECURITY.md](security.md)."
    )
    assert project_links(text, "explanation/architecture.md") == (
        "See [the benchmark](../explanation/benchmark.md) and "
        "[SECURITY.md](../project/security.md)."
    )


def test_a_broken_link_fails_the_strict_build(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    page = docs / "how-to" / "troubleshooting.md"
    page.write_text(page.read_text() + "\nSee [the missing page](../nowhere.md).\n")
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    config["docs_dir"] = str(docs)
    config["site_dir"] = str(tmp_path / "site")
    config["hooks"] = [str(ROOT / hook) for hook in config["hooks"]]
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(tmp_path / "mkdocs.yml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=120,
    )
    assert built.returncode != 0
    warnings = [line for line in built.stderr.splitlines() if line.startswith("WARNING")]
    assert len(warnings) == 1, built.stderr
    assert "'../nowhere.md'" in warnings[0]


@pytest.mark.parametrize(
    "name", ["ARCHITECTURE.md", "CHANGELOG.md", "CONTRIBUTING.md", "SECURITY.md"]
)
def test_the_files_people_look_for_are_in_the_site(name: str) -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    pages = [
        page
        for section in config["nav"]
        for entry in section.values()
        if isinstance(entry, list)
        for item in entry
        for page in item.values()
    ]
    assert name in PROJECT_FILES.values()
    assert next(page for page, file in PROJECT_FILES.items() if file == name) in pages


def test_the_mcp_guide_gives_the_form_sizes_askbridge_takes() -> None:
    guide = (ROOT / "docs" / "how-to" / "mcp.md").read_text()
    assert f"1–{MAX_FIELDS} fields" in guide
    assert f"at most {FEW_FIELDS}" in guide.replace("five", "5")


def test_the_command_line_reference_links_the_approval_flags_it_mentions() -> None:
    page = (ROOT / "docs" / "reference" / "cli.md").read_text()
    approvals = (ROOT / "docs" / "how-to" / "approvals.md").read_text()
    rows = "\n".join(line for line in approvals.splitlines() if line.startswith("| `"))
    flags = set(re.findall(r"\(`(--[a-z-]+)", rows))
    assert {"--answerer", "--quorum", "--no-self-approval"} <= flags
    assert "[approval flags](../how-to/approvals.md)" in page
    for flag in flags:
        assert flag in page, flag
