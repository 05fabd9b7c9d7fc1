"""Who is in a Slack user group, asked of Slack (`usergroups.users.list`) and kept briefly.

The broker decides eligibility from `Person.groups`; this fills it for one click with the
`slack-group:S…` answerers the clicking member belongs to.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from askbridge.core.surface import Membership

log = logging.getLogger("askbridge.slack")

GROUP = "slack-group:"
KEEP_FOR = timedelta(seconds=60)


class UserGroups:
    """Members of each user group, fetched when first needed and kept for `keep_for`: a
    member added to a group may answer a minute later, without askbridge asking Slack on
    every click."""

    def __init__(self, client: AsyncWebClient, keep_for: timedelta = KEEP_FOR) -> None:
        self.client = client
        self.keep_for = keep_for
        self._members: dict[str, tuple[datetime, frozenset[str]]] = {}

    async def membership(self, user_id: str, answerers: Sequence[str], now: datetime) -> Membership:
        found: list[str] = []
        unchecked: list[str] = []
        for entry in answerers:
            if not entry.startswith(GROUP):
                continue
            group = entry.removeprefix(GROUP)
            try:
                members = await self.members(group, now)
            except SlackApiError as error:
                log.warning(
                    "could not list the members of user group %s: %s (the app needs the "
                    "usergroups:read scope)",
                    group,
                    error.response.get("error"),
                )
                unchecked.append(entry)
                continue
            except (aiohttp.ClientError, TimeoutError) as error:
                log.warning("could not list the members of user group %s: %r", group, error)
                unchecked.append(entry)
                continue
            if user_id in members:
                found.append(entry)
        return Membership(tuple(found), tuple(unchecked))

    async def members(self, group: str, now: datetime) -> frozenset[str]:
        kept = self._members.get(group)
        if kept is not None and now - kept[0] < self.keep_for:
            return kept[1]
        response = await self.client.usergroups_users_list(usergroup=group)
        users = response.get("users") or []
        members = frozenset(str(user) for user in users)
        # Drop what has gone stale, so the cache holds only groups in use.
        self._members = {g: k for g, k in self._members.items() if now - k[0] < self.keep_for}
        self._members[group] = (now, members)
        return members
