"""How a card and a note name the Teams people among a request's answerers: as the
conversation's members say (`teams:<Entra user id>` is no name anyone reads), looked up once per
conversation and person, and kept for a bounded number of conversations. One who is not in the
conversation, or not looked up yet, is "a person not in this conversation", never an id.

Looked up when a card is posted, replaced or a reminder sent, all after any vote is recorded;
the note to the person who pressed reads only what is kept, so a press waits on no lookup."""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import aiohttp

from askbridge.adapters.teams.clicks import PLATFORM

if TYPE_CHECKING:
    from microsoft_agents.hosting.core.connector import ConnectorClientBase

log = logging.getLogger("askbridge.teams")

NOT_HERE = "a person not in this conversation"
MAX_CONVERSATIONS = 1000
"""Conversations whose members' names are kept; the least recently used give way."""
MAX_PEOPLE = 20
"""Teams people looked up per request: as many as a card names (`render.MAX_WHO`)."""
_PREFIX = f"{PLATFORM}:"


def conversation_of(conversation: str) -> str:
    """The conversation a channel thread's id (`19:…@thread.tacv2;messageid=1`) belongs to."""
    return conversation.partition(";")[0]


def teams_people(answerers: Iterable[str]) -> list[str]:
    """The Entra ids of the Teams people among the answerers (a group has no member to ask)."""
    return [a[len(_PREFIX) :] for a in answerers if a.startswith(_PREFIX)][:MAX_PEOPLE]


def named(answerers: Iterable[str], names: Mapping[str, str | None]) -> tuple[str, ...]:
    """`answerers` as people read them: a Teams person by the name in `names` (Entra id ->
    name, None: not in the conversation), else NOT_HERE; other entries as they are."""
    return tuple(
        (names.get(a[len(_PREFIX) :]) or NOT_HERE) if a.startswith(_PREFIX) else a
        for a in answerers
    )


class Members:
    """The names of the conversations' members as Teams gave them, kept per conversation."""

    def __init__(self, max_conversations: int = MAX_CONVERSATIONS) -> None:
        self._max = max_conversations
        self._kept: OrderedDict[str, dict[str, str | None]] = OrderedDict()

    def known(self, conversation: str) -> Mapping[str, str | None]:
        """What is kept of `conversation`'s members; asks Teams nothing."""
        kept = self._kept.get(conversation_of(conversation))
        return dict(kept) if kept is not None else {}

    async def look_up(
        self, connector: ConnectorClientBase, conversation: str, answerers: Iterable[str]
    ) -> Mapping[str, str | None]:
        """The names of the Teams people among `answerers` in `conversation`, asking Teams of
        each not kept yet: one not in it (a 404) is kept as None, one Teams could not answer
        for now is not kept, and asked again next time."""
        key = conversation_of(conversation)
        kept = self._kept.setdefault(key, {})
        self._kept.move_to_end(key)
        while len(self._kept) > self._max:
            self._kept.popitem(last=False)
        for user in teams_people(answerers):
            if user in kept:
                continue
            try:
                member = await connector.conversations.get_conversation_member(key, user)
            except (aiohttp.ClientError, TimeoutError) as error:
                # A card is posted all the same: a name is not worth a message not sent.
                status = error.status if isinstance(error, aiohttp.ClientResponseError) else None
                log.info("answerer %s is not named in %s (%s)", user, key, status or error)
                if status in (400, 403, 404):
                    kept[user] = None
                continue
            kept[user] = member.name or None
        return dict(kept)
