"""The one format of askbridge's Discord `custom_id`s (`ab:<request_id>:<letter>[:<q>[:<o>]]`),
and the DynamicItems that read it back.

discord.py matches each `DynamicItem`'s template against every click, so registering the classes
once in `setup_hook` serves every message askbridge ever posted, before a restart too: a click
needs nothing but its `custom_id` and the store. See ARCHITECTURE.md, "The way of a click".
"""

from __future__ import annotations

import abc
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Self

import discord
from discord import ui

from askbridge.core.broker import REQUEST_ID_PATTERN
from askbridge.core.intents import Action

log = logging.getLogger("askbridge.discord")

PREFIX = "ab"
MAX_CUSTOM_ID = 100
"""Discord's limit for a component's custom_id."""

_REQUEST = rf"(?P<request_id>{REQUEST_ID_PATTERN.pattern})"
_INDEX = r"\d{1,2}"

BUTTON_TEMPLATE = (
    rf"{PREFIX}:{_REQUEST}:"
    rf"(?:(?P<control>[sckwide])|(?P<kind>o):(?P<question>{_INDEX}):(?P<option>{_INDEX}))"
)
"""Buttons: an option of a single-select question, Submit, Cancel (and the button that confirms
it), the form's button; a typed form's "Fill in…" and Decline; Edit and allow's."""

SELECT_TEMPLATE = rf"{PREFIX}:{_REQUEST}:(?P<kind>m):(?P<question>{_INDEX})"
"""The string select of a multi-select question."""

FORM_TEMPLATE = rf"{PREFIX}:{_REQUEST}:(?P<control>f)"
"""The form (a modal) for an answer in one's own words and a note. A typed form's modal has
the id of the button that opens it, so each id matches one template."""

FIELD_TEMPLATE = rf"{PREFIX}:{_REQUEST}:(?:(?P<control>[ng])|(?P<kind>[tv]):(?P<question>{_INDEX}))"
"""A field of the form: a question's, the note's, or the changed input's; an input of a typed
form (its field's place in the form)."""

_TEMPLATES = tuple(
    re.compile(t) for t in (BUTTON_TEMPLATE, SELECT_TEMPLATE, FORM_TEMPLATE, FIELD_TEMPLATE)
)


# The letters that spell `core.intents.Action` on the wire never change, so messages posted by
# older versions keep working:
#   ab:<request_id>:o:<question>:<option>  PICK an option of a single-select question (button)
#   ab:<request_id>:m:<question>           CHOOSE_ANY options of a multi-select question (select)
#   ab:<request_id>:s / :c / :k            SUBMIT, CANCEL (asks privately), CONFIRM_CANCEL
#   ab:<request_id>:w                      WORDS: the button that opens the form
#   ab:<request_id>:f                      FORM: the form (a modal), and its submission, which
#                                          the runtime matches itself (discord.py routes one
#                                          only to a modal it still holds in memory)
#   ab:<request_id>:t:<question> / :n      TYPED: a question's field of the form; NOTE: its note
#   ab:<request_id>:i                      FILL: a typed form's "Fill in…" button, and its modal
#                                          (whose submission is a `Fill`)
#   ab:<request_id>:v:<field>              FIELD: the modal's input for the form's field number
#                                          <field> (a field's name may not fit in 100 characters)
#   ab:<request_id>:d                      DECLINE: a typed form's Decline button
#   ab:<request_id>:e / :g                 CHANGE: the button that opens the form to Edit and
#                                          allow; CHANGED: that form's field for the input
LETTERS = {
    Action.PICK: "o",
    Action.CHOOSE_ANY: "m",
    Action.SUBMIT: "s",
    Action.CANCEL: "c",
    Action.CONFIRM_CANCEL: "k",
    Action.WORDS: "w",
    Action.FORM: "f",
    Action.TYPED: "t",
    Action.NOTE: "n",
    Action.FILL: "i",
    Action.FIELD: "v",
    Action.DECLINE: "d",
    Action.CHANGE: "e",
    Action.CHANGED: "g",
}
"""The actions a Discord message or form has (`core.intents.Action`), as their custom_ids
spell them (see the module's docstring)."""
_ACTIONS = {letter: action for action, letter in LETTERS.items()}


class BadCustomId(ValueError):
    """A custom_id that askbridge did not make, or cannot make."""


@dataclass(frozen=True)
class CustomId:
    """What a component stands for; `pack()` is its custom_id."""

    request_id: str
    action: Action
    question: int | None = None
    option: int | None = None

    @classmethod
    def pick(cls, request_id: str, question: int, option: int) -> CustomId:
        return cls(request_id, Action.PICK, question, option)

    @classmethod
    def choose(cls, request_id: str, question: int) -> CustomId:
        return cls(request_id, Action.CHOOSE_ANY, question)

    @classmethod
    def submit(cls, request_id: str) -> CustomId:
        return cls(request_id, Action.SUBMIT)

    @classmethod
    def cancel(cls, request_id: str) -> CustomId:
        return cls(request_id, Action.CANCEL)

    @classmethod
    def confirm_cancel(cls, request_id: str) -> CustomId:
        return cls(request_id, Action.CONFIRM_CANCEL)

    @classmethod
    def words(cls, request_id: str) -> CustomId:
        return cls(request_id, Action.WORDS)

    @classmethod
    def form(cls, request_id: str) -> CustomId:
        return cls(request_id, Action.FORM)

    @classmethod
    def typed(cls, request_id: str, question: int) -> CustomId:
        return cls(request_id, Action.TYPED, question)

    @classmethod
    def note(cls, request_id: str) -> CustomId:
        return cls(request_id, Action.NOTE)

    @classmethod
    def fill(cls, request_id: str) -> CustomId:
        return cls(request_id, Action.FILL)

    @classmethod
    def field(cls, request_id: str, index: int) -> CustomId:
        return cls(request_id, Action.FIELD, index)

    @classmethod
    def decline(cls, request_id: str) -> CustomId:
        return cls(request_id, Action.DECLINE)

    @classmethod
    def change(cls, request_id: str) -> CustomId:
        return cls(request_id, Action.CHANGE)

    @classmethod
    def changed(cls, request_id: str) -> CustomId:
        return cls(request_id, Action.CHANGED)

    def pack(self) -> str:
        letter = LETTERS.get(self.action)
        if letter is None:
            raise BadCustomId(f"a Discord message has no {self.action.value!r} component")
        parts = [PREFIX, self.request_id, letter]
        parts += [str(i) for i in (self.question, self.option) if i is not None]
        custom_id = ":".join(parts)
        try:
            readable = unpack(custom_id) == self
        except BadCustomId:
            readable = False
        if not readable:
            raise BadCustomId(
                f"cannot make a custom_id for {self!r}: {custom_id!r} would not read back as it"
            )
        return custom_id

    @classmethod
    def from_match(cls, match: re.Match[str]) -> CustomId:
        """The id a template match stands for (the match of one of the templates above)."""
        groups = match.groupdict()
        letter = groups.get("control") or groups.get("kind")
        if letter is None:
            raise BadCustomId(f"{match.string!r} names no action")
        question, option = (
            int(groups[name]) if groups.get(name) is not None else None
            for name in ("question", "option")
        )
        return cls(groups["request_id"], _ACTIONS[letter], question, option)


def unpack(custom_id: str) -> CustomId:
    """The CustomId of a custom_id, or BadCustomId quoting it."""
    if len(custom_id) <= MAX_CUSTOM_ID:
        for template in _TEMPLATES:
            match = template.fullmatch(custom_id)
            if match is not None:
                return CustomId.from_match(match)
    raise BadCustomId(
        f"{custom_id!r} is not an askbridge custom_id; expected "
        "'ab:<request_id>:o:<question>:<option>', 'ab:<request_id>:m:<question>', "
        "'ab:<request_id>:t:<question>', 'ab:<request_id>:v:<field>', or 'ab:<request_id>:' "
        "and one of s, c, k, w, f, n, i, d, e, g"
    )


# --- the components, as discord.py DynamicItems -------------------------------------------

Button = ui.Button[ui.LayoutView]
Select = ui.Select[ui.LayoutView]


class ClickHandler(abc.ABC):
    """The client that acts on clicks (the runtime's); the items only hand clicks to it. A base
    class rather than a protocol: `isinstance` against a protocol checks each of its members on
    every call (about 20 µs on Python 3.11), and every click asks."""

    @abc.abstractmethod
    async def handle_click(
        self, interaction: discord.Interaction[Any], custom_id: CustomId, values: Sequence[str]
    ) -> None: ...


async def _hand_over(
    interaction: discord.Interaction[Any], custom_id: CustomId, values: Sequence[str]
) -> None:
    client = interaction.client
    if isinstance(client, ClickHandler):
        await client.handle_click(interaction, custom_id, values)
    else:
        log.error("a click on %s reached a client that does not handle clicks", custom_id)


class ActionButton(ui.DynamicItem[Button], template=BUTTON_TEMPLATE):
    """An option of a single-select question, Submit, Cancel, or the button that opens the form
    for an answer in one's own words."""

    def __init__(self, custom_id: CustomId, button: Button) -> None:
        super().__init__(button)
        self.parsed = custom_id

    @classmethod
    def make(cls, custom_id: CustomId, label: str, style: discord.ButtonStyle) -> Self:
        return cls(custom_id, ui.Button(label=label, style=style, custom_id=custom_id.pack()))

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: ui.Item[Any], match: re.Match[str], /
    ) -> Self:
        if not isinstance(item, ui.Button):
            raise TypeError(f"{match.string!r} should be a button, got {item!r}")
        return cls(CustomId.from_match(match), item)

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        await _hand_over(interaction, self.parsed, ())


class ChoiceSelect(ui.DynamicItem[Select], template=SELECT_TEMPLATE):
    """The string select of a multi-select question; option values are option indices."""

    def __init__(self, custom_id: CustomId, select: Select) -> None:
        super().__init__(select)
        self.parsed = custom_id

    @classmethod
    def make(
        cls, custom_id: CustomId, placeholder: str, options: Sequence[discord.SelectOption]
    ) -> Self:
        select: Select = ui.Select(
            custom_id=custom_id.pack(),
            placeholder=placeholder,
            min_values=1,
            max_values=len(options),
            options=list(options),
        )
        return cls(custom_id, select)

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: ui.Item[Any], match: re.Match[str], /
    ) -> Self:
        if not isinstance(item, ui.Select):
            raise TypeError(f"{match.string!r} should be a string select, got {item!r}")
        return cls(CustomId.from_match(match), item)

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        await _hand_over(interaction, self.parsed, tuple(self.item.values))


DYNAMIC_ITEMS: tuple[type[ui.DynamicItem[Any]], ...] = (ActionButton, ChoiceSelect)
"""Every DynamicItem class; the client registers them in `setup_hook`."""
