"""The components askbridge puts on its messages, as discord.py `DynamicItem`s.

Each class reads its state back from the clicked component's custom_id (see `codec`), so
registering the classes once in `setup_hook` serves every message, including messages posted
before a restart. The callbacks hand the click to `clicks.respond`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Self

import discord
from discord import ui

from adapters.discord import clicks
from adapters.discord.codec import BUTTON_TEMPLATE, SELECT_TEMPLATE, ComponentId

Button = ui.Button[ui.LayoutView]
Select = ui.Select[ui.LayoutView]


class ActionButton(ui.DynamicItem[Button], template=BUTTON_TEMPLATE):
    """An option of a single-select question, Submit or Cancel."""

    def __init__(self, component: ComponentId, button: Button) -> None:
        super().__init__(button)
        self.component = component

    @classmethod
    def make(cls, component: ComponentId, label: str, style: discord.ButtonStyle) -> Self:
        return cls(component, ui.Button(label=label, style=style, custom_id=component.pack()))

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: ui.Item[Any], match: re.Match[str], /
    ) -> Self:
        if not isinstance(item, ui.Button):
            raise TypeError(f"{match.string!r} should be a button, got {item!r}")
        return cls(ComponentId.from_match(match), item)

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        await clicks.respond(interaction, self.component, ())


class ChoiceSelect(ui.DynamicItem[Select], template=SELECT_TEMPLATE):
    """The string select of a multi-select question; option values are option indices."""

    def __init__(self, component: ComponentId, select: Select) -> None:
        super().__init__(select)
        self.component = component

    @classmethod
    def make(
        cls, component: ComponentId, placeholder: str, options: Sequence[discord.SelectOption]
    ) -> Self:
        select: Select = ui.Select(
            custom_id=component.pack(),
            placeholder=placeholder,
            min_values=1,
            max_values=len(options),
            options=list(options),
        )
        return cls(component, select)

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: ui.Item[Any], match: re.Match[str], /
    ) -> Self:
        if not isinstance(item, ui.Select):
            raise TypeError(f"{match.string!r} should be a string select, got {item!r}")
        return cls(ComponentId.from_match(match), item)

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        await clicks.respond(interaction, self.component, tuple(self.item.values))


DYNAMIC_ITEMS: tuple[type[ui.DynamicItem[Any]], ...] = (ActionButton, ChoiceSelect)
"""Every DynamicItem class; the client registers them in `setup_hook`."""
