"""The answerers' names kept per conversation: each person asked of Teams once, for a bounded
number of conversations, a thread's replies with their channel."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from microsoft_agents.activity import ChannelAccount
from microsoft_agents.hosting.core.connector import ConnectorClientBase

from askbridge.adapters.teams.members import NOT_HERE, Members, named


@dataclass
class Conversations:
    """The Bot Connector's conversation members, as the connector's client reads them."""

    asked: list[tuple[str, str]] = field(default_factory=list)

    async def get_conversation_member(self, conversation_id: str, member_id: str) -> Any:
        self.asked.append((conversation_id, member_id))
        return ChannelAccount(id=member_id, name=f"Name of {member_id}")


@dataclass
class Connector:
    conversations: Conversations = field(default_factory=Conversations)


async def test_names_are_kept_per_conversation_for_the_newest_conversations_only() -> None:
    members, fake = Members(max_conversations=2), Connector()
    connector = cast(ConnectorClientBase, fake)
    answerers = ("teams:u1", "web:grace")
    names = await members.look_up(connector, "19:a@thread.tacv2;messageid=7", answerers)
    assert named(answerers, names) == ("Name of u1", "web:grace")
    assert members.known("19:a@thread.tacv2") == {"u1": "Name of u1"}
    await members.look_up(connector, "19:a@thread.tacv2", answerers)
    assert fake.conversations.asked == [("19:a@thread.tacv2", "u1")]
    await members.look_up(connector, "19:b", answerers)
    await members.look_up(connector, "19:c", answerers)
    assert members.known("19:a@thread.tacv2") == {}, "the least recently used gave way"
    assert named(answerers, members.known("19:a@thread.tacv2")) == (NOT_HERE, "web:grace")
    assert members.known("19:c") == {"u1": "Name of u1"}
