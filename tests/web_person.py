"""Answering on the web page the way a browser without scripts would: GET the form, POST it."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

import aiohttp


class _Form(HTMLParser):
    """Collects the csrf token and, per question header, option label -> (field name, value)."""

    def __init__(self) -> None:
        super().__init__()
        self.csrf = ""
        self.click = ""
        """The form's one-use id, sent with it as a browser sends every hidden field."""
        self.options: dict[str, dict[str, tuple[str, str]]] = {}
        self.own: dict[str, str] = {}
        """Per question header, the field for an answer in one's own words."""
        self.takes_a_note = False
        self._header = ""
        self._pending: tuple[str, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag == "fieldset":
            self._header = found.get("data-header", "")
            self.options[self._header] = {}
        elif tag == "input" and found.get("name") == "csrf":
            self.csrf = found["value"]
        elif tag == "input" and found.get("name") == "click":
            self.click = found["value"]
        elif tag == "input" and found.get("type") in ("radio", "checkbox"):
            self._pending = (found["name"], found["value"])
        elif tag == "input" and found.get("name", "").endswith("_own"):
            self.own[self._header] = found["name"]
        elif tag == "textarea" and found.get("name") == "note":
            self.takes_a_note = True

    def handle_data(self, data: str) -> None:
        if self._pending is not None and data.strip():
            self.options[self._header][data.strip()] = self._pending
            self._pending = None


async def read_form(http: aiohttp.ClientSession, base: str, request_id: str) -> _Form:
    async with http.get(f"{base}/q/{request_id}") as response:
        assert response.status == 200, await response.text()
        form = _Form()
        form.feed(await response.text())
    return form


async def answer_on_web(
    http: aiohttp.ClientSession,
    base: str,
    request_id: str,
    picks: dict[str, list[str]],
    *,
    action: str = "submit",
    name: str = "Ada",
    typed: dict[str, str] | None = None,
    note: str | None = None,
) -> tuple[int, str]:
    """Pick options by header and visible label, type words of one's own (by header) and a
    note where the form has the fields, press Submit or Cancel; return status and page."""
    form = await read_form(http, base, request_id)
    data: list[tuple[str, Any]] = [
        ("csrf", form.csrf),
        ("click", form.click),
        ("name", name),
        ("action", action),
    ]
    for header, labels in picks.items():
        for label in labels:
            field, value = form.options[header][label]
            data.append((field, value))
    for header, text in (typed or {}).items():
        data.append((form.own[header], text))
    if note is not None:
        assert form.takes_a_note, "the form has no note field"
        data.append(("note", note))
    async with http.post(f"{base}/q/{request_id}", data=data, allow_redirects=True) as response:
        return response.status, await response.text()
