"""What a click on one of askbridge's Discord components, or a form's submission, means: who (with
their roles as `discord-role:<id>` groups), on which message, and which intent, read from
discord.py's `Interaction`. `handlers` act on it; `notes` words what came of it. See
ARCHITECTURE.md, "The way of a click".
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import discord

from askbridge.adapters.discord.forms import filled, inputs
from askbridge.adapters.discord.ids import BadCustomId, CustomId, unpack
from askbridge.core.forms import Form
from askbridge.core.intents import (
    Action,
    Cancel,
    Choose,
    Decline,
    Fill,
    Intent,
    Pick,
    Submit,
    allow_with_changes,
)
from askbridge.core.models import MessageRef, Person, Selections

ROLE_KIND = "discord-role"


SEQUENCE_BITS = 0xFFF
"""A snowflake's increment: ids made in one millisecond by one Discord process differ in it."""


@dataclass(frozen=True)
class Click:
    request_id: str
    person: Person
    origin: MessageRef
    intent: Intent
    sent_at: datetime
    """When Discord made the interaction (its id is a timestamp): a redelivery is no newer."""


def parse(
    interaction: discord.Interaction[Any], custom_id: CustomId, values: Sequence[str]
) -> Click:
    """Who clicked, on which message, meaning what; BadCustomId when the select's values are
    not the option numbers askbridge gave it."""
    question, option = custom_id.question or 0, custom_id.option or 0
    intent: Intent
    match custom_id.action:
        case Action.PICK:
            intent = Pick(question, option)
        case Action.CHOOSE_ANY:
            if not all(v.isdigit() for v in values):
                raise BadCustomId(f"{custom_id.pack()!r} sent {list(values)!r}, not option numbers")
            intent = Choose(question, tuple(int(v) for v in values))
        case Action.SUBMIT:
            intent = Submit()
        case Action.CONFIRM_CANCEL:
            intent = Cancel()
        case Action.DECLINE:
            intent = Decline()
        case Action.FILL:
            # A form that is a link to open: "Done" fills it in with nothing.
            intent = Fill({})
        case _:
            raise BadCustomId(f"{custom_id.pack()!r} is not a click that askbridge acts on")
    origin = where(interaction)
    if custom_id.action is Action.CONFIRM_CANCEL:
        # The button sits on the private question that the Cancel click was answered with;
        # Discord names the message that click came from.
        origin = asked_from(interaction)
    return Click(custom_id.request_id, who(interaction), origin, intent, sent(interaction))


def who(interaction: discord.Interaction[Any]) -> Person:
    """The person behind an interaction, with their roles as answerer groups."""
    user = interaction.user
    return Person(
        platform="discord",
        id=str(user.id),
        name=user.display_name,
        groups=groups(user, interaction.guild_id),
    )


def where(interaction: discord.Interaction[Any]) -> MessageRef:
    """The message an interaction came from (a click's, or the one whose button opened a form);
    an interaction without one names message 0, which no request has."""
    message_id = interaction.message.id if interaction.message is not None else 0
    return MessageRef(
        platform="discord", channel=str(interaction.channel_id), message_id=str(message_id)
    )


def asked_from(interaction: discord.Interaction[Any]) -> MessageRef:
    """The message whose component was clicked to make the private note `interaction` came
    from (through the modal that click opened, for a note answering a modal's submission);
    message 0 when Discord names none."""
    note = interaction.message
    metadata = note.interaction_metadata if note is not None else None
    if metadata is not None and metadata.modal_interaction is not None:
        metadata = metadata.modal_interaction
    message_id = (metadata.interacted_message_id if metadata is not None else None) or 0
    return MessageRef(
        platform="discord", channel=str(interaction.channel_id), message_id=str(message_id)
    )


def on_note(interaction: discord.Interaction[Any]) -> bool:
    """Whether the interaction came from a private note (an ephemeral message) askbridge sent
    in answer to the person, rather than from a request's message."""
    message = interaction.message
    return message is not None and message.flags.ephemeral


def origin(interaction: discord.Interaction[Any]) -> MessageRef:
    """The request's message an interaction comes from: the one clicked, or, for a click on
    a private note (or a form opened from one), the message the note answered a click on."""
    return asked_from(interaction) if on_note(interaction) else where(interaction)


def sent(interaction: discord.Interaction[Any]) -> datetime:
    """When Discord made the interaction: its id is a timestamp in milliseconds, and its
    sequence number (the id's low 12 bits) orders those of one millisecond, here as
    microseconds, so that two clicks of one millisecond stay two clicks (the broker knows a
    click delivered again by who made it and when) while a redelivery is the same."""
    sequence = (interaction.id & SEQUENCE_BITS) % 1000
    return discord.utils.snowflake_time(interaction.id) + timedelta(microseconds=sequence)


def groups(user: discord.User | discord.Member, guild_id: int | None) -> tuple[str, ...]:
    """The clicking member's roles as answerer entries; none in a DM.

    The role ids come from the interaction's own member object, so they are right even for
    a role the client's cache has not seen. The guild's id is its @everyone role.
    """
    if not isinstance(user, discord.Member) or guild_id is None:
        return ()
    ids = {int(r) for r in getattr(user, "_roles", ())}
    ids.update(role.id for role in user.roles)
    ids.add(guild_id)
    return tuple(f"{ROLE_KIND}:{i}" for i in sorted(ids))


def parse_submission(interaction: discord.Interaction[Any], custom_id: CustomId) -> Click:
    """Who submitted the form, from which message, with what typed; BadCustomId when a field
    is not one of this form's."""
    typed: dict[int, str] = {}
    note_text = ""
    changed: str | None = None
    for field_id, value in values(interaction.data or {}):
        field = unpack(field_id)
        if field.request_id != custom_id.request_id:
            raise BadCustomId(f"{field_id!r} is not a field of {custom_id.pack()!r}")
        if field.action is Action.TYPED and field.question is not None:
            typed[field.question] = value
        elif field.action is Action.NOTE:
            note_text = value
        elif field.action is Action.CHANGED:
            changed = value
        else:
            raise BadCustomId(f"{field_id!r} is not a field of {custom_id.pack()!r}")
    # What is in a question's field is all of its answer: it was prefilled with the person's
    # picks, so a pick they deleted there is no longer chosen.
    cleared: Selections = dict.fromkeys(typed, ())
    intent = (
        Submit(cleared, typed=typed, note=note_text)
        if changed is None
        else allow_with_changes(changed, note_text)
    )
    return Click(
        custom_id.request_id,
        who(interaction),
        where(interaction),
        intent,
        sent(interaction),
    )


def parse_fill(interaction: discord.Interaction[Any], custom_id: CustomId, form: Form) -> Click:
    """Who submitted a typed form's modal, from which message, with which values; BadCustomId
    when an input is not one of this form's."""
    given = filled(form, custom_id.request_id, interaction.data or {})
    return Click(
        custom_id.request_id, who(interaction), origin(interaction), Fill(given), sent(interaction)
    )


def values(data: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(custom_id, value) of every text input in a modal submission's data."""
    for custom_id, value in inputs(data):
        if isinstance(value, str):
            yield custom_id, value
