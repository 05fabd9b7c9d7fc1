"""MkDocs hooks (mkdocs.yml `hooks:`): the reference pages' generated parts, made at build time.

A page asks for a part with a line `<!-- generated: NAME -->`; an unknown name stops the build.
ARCHITECTURE.md, CHANGELOG.md, CONTRIBUTING.md and SECURITY.md stay at the top of the
repository, where people look for them, and become pages of the site with their links to
`docs/` made site links.
Nothing here reaches the network.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

from tests.docs.api_reference import api_page, openapi_json
from tests.docs.cli_reference import cli_page, exit_statuses_page
from tests.docs.previews import previews_page
from tests.docs.settings_reference import settings_page
from tests.docs.socket_reference import socket_page

ROOT = Path(__file__).resolve().parent.parent.parent
PARTS: dict[str, Callable[[], str]] = {
    "http-api": api_page,
    "settings": settings_page,
    "cli": cli_page,
    "exit-statuses": exit_statuses_page,
    "websocket-frames": socket_page,
    "message-previews": previews_page,
}
PROJECT_FILES = {
    "explanation/architecture.md": "ARCHITECTURE.md",
    "project/changelog.md": "CHANGELOG.md",
    "project/contributing.md": "CONTRIBUTING.md",
    "project/security.md": "SECURITY.md",
}
MARKER = re.compile(r"^<!-- generated: (?P<name>[\w-]+) -->$", re.MULTILINE)


def on_files(files: Files, config: MkDocsConfig, **_: Any) -> Files:
    """The OpenAPI document itself, beside the page made from it; the project's files."""
    files.append(File.generated(config, "reference/openapi.json", content=openapi_json()))
    for page, name in PROJECT_FILES.items():
        text = (ROOT / name).read_text()
        files.append(File.generated(config, page, content=project_links(text, page)))
    return files


def project_links(text: str, page: str) -> str:
    """A top-level file's links as the site sees them from `page`: `docs/x.md` is `../x.md`
    (every such page is one folder down), and the other top-level files are their pages."""
    text = text.replace("](docs/", "](../")
    here = posixpath.dirname(page)
    for other, name in PROJECT_FILES.items():
        text = text.replace(f"]({name}", f"]({posixpath.relpath(other, here)}")
    return text


def on_page_markdown(markdown: str, page: Page, **_: Any) -> str:
    def part(found: re.Match[str]) -> str:
        name = found["name"]
        if name not in PARTS:
            raise PluginError(f"{page.file.src_uri}: no generated part {name!r}")
        return PARTS[name]()

    return MARKER.sub(part, markdown)
