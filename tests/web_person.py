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
        self.action = ""
        """Where the form posts to."""
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
        if tag == "form":
            self.action = found.get("action", "")
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


async def read_form(
    http: aiohttp.ClientSession, base: str, request_id: str, link: str | None = None
) -> _Form:
    """The question's form, from its page (`link`: the page's path as a link gave it)."""
    async with http.get(f"{base}{link or f'/q/{request_id}'}") as response:
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
    link: str | None = None,
) -> tuple[int, str]:
    """Pick options by header and visible label, type words of one's own (by header) and a
    note where the form has the fields, press Submit or Cancel; return status and page.
    `link`: the page as a link opens it (its path and query), whose form posts where it says."""
    form = await read_form(http, base, request_id, link)
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
    posted = f"{base}{form.action}" if link else f"{base}/q/{request_id}"
    return await _pressed(http, posted, data, action)


async def _pressed(
    http: aiohttp.ClientSession, posted: str, data: list[tuple[str, Any]], action: str
) -> tuple[int, str]:
    """`data` posted to `posted` as the button `action` sends it; status and page."""
    if action == "cancel":
        # No script asks first here: a page does, whose button posts the Cancel said yes to.
        async with http.post(posted, data=data, allow_redirects=True) as response:
            asked = await response.text()
        assert "name='confirmed' value='yes'" in asked, asked
        data.append(("confirmed", "yes"))
    async with http.post(posted, data=data, allow_redirects=True) as response:
        return response.status, await response.text()


RELEASE_FORM: dict[str, Any] = {
    "message": "Release details for billing v2",
    "requested_schema": {
        "type": "object",
        "properties": {
            "contact": {
                "type": "string",
                "format": "email",
                "title": "Contact",
                "description": "Who answers questions about the release",
            },
            "replicas": {
                "type": "integer",
                "title": "Replicas",
                "minimum": 1,
                "maximum": 10,
                "default": 3,
            },
            "canary": {"type": "boolean", "title": "Canary first", "default": True},
            "region": {
                "type": "string",
                "title": "Region",
                "enum": ["eu-west-1", "us-east-1"],
                "enumNames": ["Europe (Ireland)", "US East"],
            },
            "checks": {
                "type": "array",
                "title": "Checks",
                "items": {
                    "type": "string",
                    "oneOf": [
                        {"const": "smoke", "title": "Smoke tests"},
                        {"const": "load", "title": "Load tests"},
                        {"const": "security", "title": "Security scan"},
                    ],
                },
                "minItems": 1,
            },
        },
        "required": ["contact", "replicas", "region"],
    },
}
"""A form with a text in a format, a bounded integer, a boolean, a choice and a multi-choice."""


class _TypedForm(HTMLParser):
    """What a browser sends of a typed form as it stands: each successful control's name and
    value, in order (no button yet); and each input's attributes by its name."""

    def __init__(self) -> None:
        super().__init__()
        self.data: list[tuple[str, str]] = []
        self.inputs: dict[str, dict[str, str]] = {}
        self._select: str | None = None
        self._selected: tuple[str, str] | None = None
        self._first: tuple[str, str] | None = None
        self._textarea: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        name = found.get("name", "")
        if tag == "input" and name:
            self.inputs.setdefault(name, found)
            if found.get("type") not in ("checkbox", "radio") or "checked" in found:
                self.data.append((name, found.get("value", "")))
        elif tag == "select":
            self.inputs[name] = found
            self._select, self._selected, self._first = name, None, None
        elif tag == "option" and self._select is not None:
            option = (self._select, found.get("value", ""))
            self._first = self._first or option
            if "selected" in found:
                self._selected = option
        elif tag == "textarea":
            self.inputs[name] = found
            self._textarea, self._text = name, []

    def handle_endtag(self, tag: str) -> None:
        if tag == "select" and self._select is not None:
            chosen = self._selected or self._first
            if chosen is not None:
                self.data.append(chosen)
            self._select = None
        elif tag == "textarea" and self._textarea is not None:
            # The parser keeps the line break after the tag, which a browser drops.
            text = "".join(self._text)
            self.data.append((self._textarea, text.removeprefix("\n")))
            self._textarea = None

    def handle_data(self, data: str) -> None:
        if self._textarea is not None:
            self._text.append(data)


def typed_form(html: str) -> _TypedForm:
    found = _TypedForm()
    found.feed(html)
    found.close()
    return found


async def fill_on_web(
    http: aiohttp.ClientSession,
    base: str,
    request_id: str,
    values: dict[str, str | list[str]],
    *,
    action: str = "submit",
    name: str = "Ada",
) -> tuple[int, str]:
    """A typed form as a browser without scripts sends it: its inputs as they stand, with the
    inputs named in `values` (their `name` attribute) set, a list checking those boxes; then
    the button `action`. Return status and page."""
    async with http.get(f"{base}/q/{request_id}") as response:
        assert response.status == 200, await response.text()
        form = typed_form(await response.text())
    data = [(k, v) for k, v in form.data if k not in values and k != "name"]
    for key, value in values.items():
        data += [(key, v) for v in value] if isinstance(value, list) else [(key, value)]
    data += [("name", name), ("action", action)]
    return await _pressed(http, f"{base}/q/{request_id}", data, action)


async def change_on_web(
    http: aiohttp.ClientSession, base: str, request_id: str, changed: str, *, name: str = "Ada"
) -> tuple[int, str]:
    """Edit and allow: write `changed` in the page's edit field and press its button; return
    status and page."""
    form = await read_form(http, base, request_id)
    data = [
        ("csrf", form.csrf),
        ("click", form.click),
        ("name", name),
        ("changed", changed),
        ("action", "change"),
    ]
    async with http.post(f"{base}/q/{request_id}", data=data, allow_redirects=True) as response:
        return response.status, await response.text()
