"""The Discord emulator's modals: it refuses the MODAL responses Discord refuses, shows a valid
one to the person who clicked, and delivers their submission (MODAL_SUBMIT) over the gateway,
once, as Discord's client would send it. Proven against an unmodified discord.py client."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Self

import discord
import pytest
from discord import ui

from .discord import (
    CannotSubmit,
    DiscordEmulator,
    InteractionFailed,
    Message,
    User,
    validate_modal,
)
from .discord.dpy import connected

TOKEN = "test-bot-token"


# --- a tiny bot that shows a feedback form --------------------------------------------------


def feedback(title: str = "Feedback") -> ui.Modal:
    """Two fields: a required short one, prefilled, and an optional paragraph."""
    modal = ui.Modal(title=title, custom_id="feedback", timeout=None)
    name: ui.TextInput[ui.Modal] = ui.TextInput(
        custom_id="name", default="Ada", required=True, min_length=2, max_length=10
    )
    comment: ui.TextInput[ui.Modal] = ui.TextInput(
        custom_id="comment", style=discord.TextStyle.paragraph, required=False
    )
    modal.add_item(ui.Label(text="Name", description="Who you are", component=name))
    modal.add_item(ui.Label(text="Comment", component=comment))
    # Submissions are read in on_interaction, as after a restart: discord.py need not keep it.
    modal.stop()
    return modal


def survey() -> ui.Modal:
    """A text input and two string selects: one required, one optional taking several."""
    modal = ui.Modal(title="Survey", custom_id="survey", timeout=None)
    name: ui.TextInput[ui.Modal] = ui.TextInput(custom_id="name", required=False)
    colour: ui.Select[ui.Modal] = ui.Select(
        custom_id="colour",
        options=[
            discord.SelectOption(label="Red", value="r"),
            discord.SelectOption(label="Blue", value="b", default=True),
        ],
    )
    pets: ui.Select[ui.Modal] = ui.Select(
        custom_id="pets",
        placeholder="Any pets?",
        min_values=0,
        max_values=3,
        required=False,
        options=[discord.SelectOption(label=p, value=p.lower()) for p in ("Cat", "Dog", "Eel")],
    )
    modal.add_item(ui.Label(text="Name", component=name))
    modal.add_item(ui.Label(text="Colour", description="Pick one", component=colour))
    modal.add_item(ui.Label(text="Pets", component=pets))
    modal.stop()
    return modal


class OpenForm(ui.DynamicItem[ui.Button[ui.View]], template=r"form:(?P<title>[a-z]+)"):
    def __init__(self, title: str) -> None:
        super().__init__(ui.Button(label=f"Open {title}", custom_id=f"form:{title}"))
        self.title = title

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[discord.Client],
        item: ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> Self:
        return cls(match["title"])

    async def callback(self, interaction: discord.Interaction[discord.Client]) -> None:
        bot = interaction.client
        assert isinstance(bot, FormBot)
        title = "x" * 46 if self.title == "long" else "Feedback"
        try:
            shown = survey() if self.title == "survey" else feedback(title)
            await interaction.response.send_modal(shown)
        except Exception as exc:
            await bot.errors.put(exc)


class FormBot(discord.Client):
    """Answers a submission as `reply` says: ephemerally, deferred, or (wrongly) with a modal."""

    def __init__(self, reply: str = "message") -> None:
        intents = discord.Intents.none()
        intents.guilds = True
        super().__init__(intents=intents, guild_ready_timeout=0.05)
        self.reply = reply
        self.ready = asyncio.Event()
        self.submissions: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.errors: asyncio.Queue[BaseException] = asyncio.Queue()

    async def setup_hook(self) -> None:
        self.add_dynamic_items(OpenForm)

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        """discord.py waits 5 s before every IDENTIFY but the first; tests need not."""

    async def on_ready(self) -> None:
        self.ready.set()

    async def on_interaction(self, interaction: discord.Interaction[discord.Client]) -> None:
        if interaction.type is not discord.InteractionType.modal_submit:
            return
        data: dict[str, Any] = dict(interaction.data or {})
        message = interaction.message.id if interaction.message else None
        await self.submissions.put({**data, "message": message, "user": interaction.user.id})
        typed = {
            c["component"]["custom_id"]: c["component"].get("value", c["component"].get("values"))
            for c in data["components"]
        }
        try:
            if self.reply == "message":
                await interaction.response.send_message(f"got {typed}", ephemeral=True)
            elif self.reply == "defer":
                await interaction.response.defer()
                await interaction.followup.send(f"later: {typed}", ephemeral=True)
            else:
                await interaction.response.send_modal(feedback())
        except Exception as exc:
            await self.errors.put(exc)


@asynccontextmanager
async def running(reply: str = "message") -> AsyncIterator[FormBot]:
    bot = FormBot(reply)
    async with connected(bot, bot.ready, TOKEN):
        yield bot


@dataclass
class Place:
    emulator: DiscordEmulator
    channel_id: int
    alice: User
    bob: User


@pytest.fixture
def place(discord_py_redirected: DiscordEmulator) -> Place:
    emulator = discord_py_redirected
    guild = emulator.add_guild("g")
    channel = emulator.add_text_channel(guild.id, "forms")
    alice, bob = emulator.add_user("alice"), emulator.add_user("bob")
    for user in (alice, bob):
        emulator.add_member(guild.id, user.id)
    return Place(emulator, channel.id, alice, bob)


async def post(bot: FormBot, place: Place, *titles: str) -> Message:
    view = ui.View(timeout=None)
    for title in titles or ("feedback",):
        view.add_item(OpenForm(title))
    sent = await bot.get_partial_messageable(place.channel_id).send("Tell us", view=view)
    return place.emulator.message(sent.id)


# --- showing a modal, submitting it ---------------------------------------------------------


async def test_a_modal_is_shown_and_its_submission_comes_over_the_gateway(place: Place) -> None:
    emulator = place.emulator
    async with running() as bot:
        question = await post(bot, place)
        opened = await emulator.click(question, place.alice.id, "Open feedback")
        modal = await opened.modal()
        assert (modal.custom_id, modal.title) == ("feedback", "Feedback")
        name, comment = modal.fields
        assert (name.label, name.description, name.value, name.style) == (
            "Name",
            "Who you are",
            "Ada",
            1,
        )
        assert (name.required, name.min_length, name.max_length) == (True, 2, 10)
        assert (comment.label, comment.value, comment.required, comment.style) == (
            "Comment",
            "",
            False,
            2,
        )

        sent = await emulator.submit_modal(opened, {"Comment": "Nice <@1>"})
        reply = await sent.wait_for_ephemeral()
        assert reply.text == "got {'name': 'Ada', 'comment': 'Nice <@1>'}"
        # The reply names the submission, and through it the click that opened the modal.
        metadata = reply.payload["interaction_metadata"]
        assert (metadata["id"], metadata["type"]) == (str(sent.id), 5)
        assert "interacted_message_id" not in metadata
        triggering = metadata["triggering_interaction_metadata"]
        assert (triggering["id"], triggering["type"]) == (str(opened.id), 3)
        assert triggering["interacted_message_id"] == str(question.id)
        submitted = await bot.submissions.get()
    assert submitted["custom_id"] == "feedback"
    assert (submitted["message"], submitted["user"]) == (question.id, place.alice.id)
    assert sent.payload["type"] == 5
    assert (sent.delivered_to, sent.callback and sent.callback.type) == (1, 4)
    # Discord numbers the modal's components and echoes the ids with each value.
    [first, second] = submitted["components"]
    assert first == {
        "type": 18,
        "id": 1,
        "component": {"type": 4, "id": 2, "custom_id": "name", "value": "Ada"},
    }
    assert second["component"]["value"] == "Nice <@1>"


async def test_a_modal_with_string_selects_is_shown_and_submitted(place: Place) -> None:
    emulator = place.emulator
    async with running() as bot:
        question = await post(bot, place, "survey")
        opened = await emulator.click(question, place.alice.id, "Open survey")
        modal = await opened.modal()
        assert modal.labels == ["Name", "Colour", "Pets"]
        colour, pets = modal.selects
        assert (colour.description, colour.chosen, colour.required) == ("Pick one", ["Blue"], True)
        assert (colour.min_values, colour.max_values) == (1, 1)
        assert [(o.label, o.value) for o in pets.options] == [
            ("Cat", "cat"),
            ("Dog", "dog"),
            ("Eel", "eel"),
        ]
        assert (pets.placeholder, pets.min_values, pets.max_values) == ("Any pets?", 0, 3)
        assert pets.required is False

        with pytest.raises(CannotSubmit, match="'Colour' is required"):
            await emulator.submit_modal(opened, {"Colour": []})
        with pytest.raises(CannotSubmit, match="takes 1-1 options"):
            await emulator.submit_modal(opened, {"Colour": ["Red", "Blue"]})
        with pytest.raises(CannotSubmit, match="cannot pick"):
            await emulator.submit_modal(opened, {"Pets": ["Cow"]})
        with pytest.raises(CannotSubmit, match="pick options by a list"):
            await emulator.submit_modal(opened, {"Pets": "Cat"})
        with pytest.raises(CannotSubmit, match="type a text"):
            await emulator.submit_modal(opened, {"Name": ["Cat"]})
        assert bot.submissions.empty()

        sent = await emulator.submit_modal(opened, {"Pets": ["Eel", "Cat"]})
        reply = await sent.wait_for_ephemeral()
        assert reply.text == "got {'name': '', 'colour': ['b'], 'pets': ['eel', 'cat']}"
        submitted = await bot.submissions.get()
    assert submitted["components"][1] == {
        "type": 18,
        "id": 3,
        "component": {"type": 3, "id": 4, "custom_id": "colour", "values": ["b"]},
    }


async def test_a_modal_is_submitted_once_by_the_person_it_was_shown_to(place: Place) -> None:
    emulator = place.emulator
    async with running() as bot:
        question = await post(bot, place)
        opened = await emulator.click(question, place.alice.id, "Open feedback")
        await opened.modal()
        with pytest.raises(CannotSubmit, match="was shown to user"):
            await emulator.submit_modal(opened, user_id=place.bob.id)
        await (await emulator.submit_modal(opened)).response()
        with pytest.raises(CannotSubmit, match="already submitted"):
            await emulator.submit_modal(opened)
        other = await emulator.click(question, place.bob.id, "Open feedback")
        await other.modal()
        await (await emulator.submit_modal(other, {"Name": "Bob"})).response()


async def test_the_person_cannot_send_what_discords_client_refuses(place: Place) -> None:
    emulator = place.emulator
    async with running() as bot:
        question = await post(bot, place)
        opened = await emulator.click(question, place.alice.id, "Open feedback")
        await opened.modal()
        with pytest.raises(CannotSubmit, match="'Name' is required"):
            await emulator.submit_modal(opened, {"Name": ""})
        with pytest.raises(CannotSubmit, match="takes 2-10 characters"):
            await emulator.submit_modal(opened, {"Name": "x" * 11})
        with pytest.raises(CannotSubmit, match="takes 2-10 characters"):
            await emulator.submit_modal(opened, {"Name": "x"})
        with pytest.raises(CannotSubmit, match=r"no fields \['Age'\]"):
            await emulator.submit_modal(opened, {"Age": "7"})
        # None of these reached the bot, and the modal is still open.
        assert bot.submissions.empty()
        await (await emulator.submit_modal(opened, {"Comment": ""})).response()
        clicked = await emulator.click(question, place.alice.id, "Open feedback")
        await clicked.modal()
    with pytest.raises(CannotSubmit, match="showed no modal"):
        await emulator.submit_modal(await emulator.click(question, place.bob.id, "Open feedback"))


async def test_a_submission_can_be_deferred_then_followed_up(place: Place) -> None:
    async with running(reply="defer") as bot:
        question = await post(bot, place)
        opened = await place.emulator.click(question, place.alice.id, "Open feedback")
        await opened.modal()
        sent = await place.emulator.submit_modal(opened)
        assert (await sent.response()).type == 6
        reply = await sent.wait_for_ephemeral("later:")
    assert reply.ephemeral_for == place.alice.id
    assert sent.refused == []


async def test_an_invalid_modal_is_refused_and_the_click_fails(place: Place) -> None:
    async with running() as bot:
        question = await post(bot, place, "long")
        opened = await place.emulator.click(question, place.alice.id, "Open long")
        error = await asyncio.wait_for(bot.errors.get(), 5)
    assert isinstance(error, discord.HTTPException)
    assert error.code == 50035
    with pytest.raises(InteractionFailed, match="type 9 response refused"):
        await opened.response(timeout=0)
    [rejection] = place.emulator.rejections
    assert rejection.where == "interaction callback type 9"
    assert rejection.invalid.problems == (
        "title: BASE_TYPE_BAD_LENGTH: Must be between 1 and 45 in length.",
    )


async def test_a_submission_cannot_be_answered_with_another_modal(place: Place) -> None:
    async with running(reply="modal") as bot:
        question = await post(bot, place)
        opened = await place.emulator.click(question, place.alice.id, "Open feedback")
        await opened.modal()
        sent = await place.emulator.submit_modal(opened)
        error = await asyncio.wait_for(bot.errors.get(), 5)
    assert isinstance(error, discord.HTTPException)
    assert "cannot be answered with another modal" in str(error)
    with pytest.raises(InteractionFailed):
        await sent.response(timeout=0)


async def test_a_modal_opened_before_a_restart_is_submitted_to_the_new_client(
    place: Place,
) -> None:
    emulator = place.emulator
    async with running() as first:
        question = await post(first, place)
        opened = await emulator.click(question, place.alice.id, "Open feedback")
        await opened.modal()
    async with running() as second:
        sent = await emulator.submit_modal(opened, {"Name": "Alice"})
        await sent.wait_for_ephemeral("'Alice'")
        assert (await second.submissions.get())["custom_id"] == "feedback"


# --- what Discord refuses in a modal --------------------------------------------------------


def text_input(**extra: Any) -> dict[str, Any]:
    return {"type": 4, "custom_id": "i", "style": 1, **extra}


def labelled(item: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": 18, "label": "Answer", "component": item, **extra}


def option(value: str, **extra: Any) -> dict[str, Any]:
    return {"label": value, "value": value, **extra}


def select(**extra: Any) -> dict[str, Any]:
    return {"type": 3, "custom_id": "s", "options": [option("a"), option("b")], **extra}


def modal(*components: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"custom_id": "m", "title": "Form", "components": list(components), **extra}


MODAL_RULES: dict[str, tuple[dict[str, Any], str]] = {
    "no custom_id": (
        {"title": "Form", "components": [labelled(text_input())]},
        "custom_id: BASE_TYPE_BAD_LENGTH",
    ),
    "custom_id over 100": (
        modal(labelled(text_input()), custom_id="m" * 101),
        "custom_id: BASE_TYPE_BAD_LENGTH",
    ),
    "empty title": (modal(labelled(text_input()), title=""), "title: BASE_TYPE_BAD_LENGTH"),
    "title over 45": (modal(labelled(text_input()), title="t" * 46), "title: BASE_TYPE_BAD_LENGTH"),
    "no components": (modal(), "components: BASE_TYPE_BAD_LENGTH"),
    "six components": (
        modal(*(labelled(text_input(custom_id=f"i{i}")) for i in range(6))),
        "components: BASE_TYPE_BAD_LENGTH",
    ),
    "a button at the top": (
        modal({"type": 2, "style": 1, "label": "b", "custom_id": "b"}),
        "components.0.type: UNION_TYPE_CHOICES",
    ),
    "label over 45": (
        modal(labelled(text_input(), label="l" * 46)),
        "components.0.label: BASE_TYPE_BAD_LENGTH",
    ),
    "description over 100": (
        modal(labelled(text_input(), description="d" * 101)),
        "components.0.description: BASE_TYPE_MAX_LENGTH",
    ),
    "a button in a label": (
        modal(labelled({"type": 2, "style": 1, "label": "b", "custom_id": "b"})),
        "components.0.component.type: UNION_TYPE_CHOICES",
    ),
    "text input style 3": (modal(labelled(text_input(style=3))), "component.style"),
    "text input custom_id over 100": (
        modal(labelled(text_input(custom_id="i" * 101))),
        "component.custom_id: BASE_TYPE_BAD_LENGTH",
    ),
    "text input label over 45": (
        modal(labelled(text_input(label="l" * 46))),
        "component.label: BASE_TYPE_MAX_LENGTH",
    ),
    "placeholder over 100": (
        modal(labelled(text_input(placeholder="p" * 101))),
        "component.placeholder: BASE_TYPE_MAX_LENGTH",
    ),
    "value over 4000": (
        modal(labelled(text_input(value="v" * 4001))),
        "component.value: BASE_TYPE_MAX_LENGTH",
    ),
    "min_length below 0": (modal(labelled(text_input(min_length=-1))), "component.min_length"),
    "min_length over 4000": (modal(labelled(text_input(min_length=4001))), "component.min_length"),
    "max_length of 0": (modal(labelled(text_input(max_length=0))), "component.max_length"),
    "max_length over 4000": (modal(labelled(text_input(max_length=4001))), "component.max_length"),
    "min_length above max_length": (
        modal(labelled(text_input(min_length=5, max_length=4))),
        "min_length must be <= max_length",
    ),
    "required not a boolean": (
        modal(labelled(text_input(required="yes"))),
        "component.required: BASE_TYPE_BOOLEAN",
    ),
    "a disabled input": (
        modal(labelled(text_input(disabled=True))),
        "component.disabled: MODAL_COMPONENT_DISABLED",
    ),
    "a disabled select": (
        modal(labelled(select(disabled=True))),
        "component.disabled: MODAL_COMPONENT_DISABLED",
    ),
    "a select without options": (
        modal(labelled(select(options=[]))),
        "component.options: BASE_TYPE_BAD_LENGTH",
    ),
    "a select of 26 options": (
        modal(labelled(select(options=[option(f"o{i}") for i in range(26)]))),
        "component.options: BASE_TYPE_BAD_LENGTH",
    ),
    "an option label over 100": (
        modal(labelled(select(options=[option("a", label="l" * 101)]))),
        "component.options.0.label: BASE_TYPE_BAD_LENGTH",
    ),
    "an option value over 100": (
        modal(labelled(select(options=[option("v" * 101)]))),
        "component.options.0.value: BASE_TYPE_BAD_LENGTH",
    ),
    "an option description over 100": (
        modal(labelled(select(options=[option("a", description="d" * 101)]))),
        "component.options.0.description: BASE_TYPE_MAX_LENGTH",
    ),
    "two options of one value": (
        modal(labelled(select(options=[option("a"), option("a")]))),
        "SELECT_COMPONENT_OPTION_VALUE_DUPLICATED",
    ),
    "a select placeholder over 150": (
        modal(labelled(select(placeholder="p" * 151))),
        "component.placeholder: BASE_TYPE_MAX_LENGTH",
    ),
    "min_values over 25": (modal(labelled(select(min_values=26))), "component.min_values"),
    "max_values of 0": (modal(labelled(select(max_values=0))), "component.max_values"),
    "max_values over the options": (
        modal(labelled(select(max_values=3))),
        "max_values (3) must not exceed the option count (2)",
    ),
    "min_values above max_values": (
        modal(labelled(select(min_values=2, max_values=1))),
        "min_values must be <= max_values",
    ),
    "more defaults than max_values": (
        modal(labelled(select(options=[option("a", default=True), option("b", default=True)]))),
        "SELECT_COMPONENT_TOO_MANY_DEFAULT_VALUES",
    ),
    "min_values 0 on a required select": (
        modal(labelled(select(min_values=0))),
        "min_values must be omitted or at least 1 when required",
    ),
    "a select's required not a boolean": (
        modal(labelled(select(required="no"))),
        "component.required: BASE_TYPE_BOOLEAN",
    ),
    "a select in an action row": (
        modal({"type": 1, "components": [select()]}),
        "An action row in a modal holds exactly one text input",
    ),
    "a duplicated custom_id": (
        modal(labelled(text_input()), labelled(text_input())),
        "COMPONENT_CUSTOM_ID_DUPLICATED",
    ),
    "a text input in a row without a label": (
        modal({"type": 1, "components": [text_input()]}),
        "components.0.components.0.label: BASE_TYPE_BAD_LENGTH",
    ),
    "two text inputs in a row": (
        modal({"type": 1, "components": [text_input(label="a"), text_input(label="b")]}),
        "components.0.components: BASE_TYPE_BAD_LENGTH",
    ),
}


@pytest.mark.parametrize(("data", "expected"), MODAL_RULES.values(), ids=MODAL_RULES.keys())
def test_a_modal_is_refused_as_discord_refuses_it(data: dict[str, Any], expected: str) -> None:
    invalid = validate_modal(data)
    assert invalid is not None, "the emulator accepted a modal Discord refuses"
    assert invalid.code == 50035
    assert any(expected in problem for problem in invalid.problems), invalid.problems


def test_modals_within_every_limit_are_accepted() -> None:
    fields = [
        labelled(
            text_input(
                custom_id=f"i{i}",
                style=2,
                label=None,
                placeholder="p" * 100,
                value="v" * 4000,
                min_length=0,
                max_length=4000,
                required=False,
            ),
            label="l" * 45,
            description="d" * 100,
        )
        for i in range(4)
    ]
    legacy = {"type": 1, "components": [text_input(custom_id="old", label="Old")]}
    assert validate_modal(modal(*fields, legacy, custom_id="m" * 100, title="t" * 45)) is None
    widest = select(
        placeholder="p" * 150,
        options=[
            option(f"{i:02}" + "v" * 98, label="l" * 100, description="d" * 100, default=i < 25)
            for i in range(25)
        ],
        min_values=0,
        max_values=25,
        required=False,
        disabled=False,
    )
    assert validate_modal(modal(labelled(widest), labelled(select(custom_id="t")))) is None
    assert validate_modal(feedback().to_dict()) is None
