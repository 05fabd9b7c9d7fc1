"""Typed shapes of the Slack JSON the emulator produces.

Blocks themselves stay plain dictionaries: they are whatever the app under test sent, and the
emulator must be able to hold (and reject) any shape.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

JSONDict = dict[str, Any]
Block = dict[str, Any]


class UserRef(TypedDict):
    id: str
    username: str
    name: str
    team_id: str


class TeamRef(TypedDict):
    id: str
    domain: str


class ChannelRef(TypedDict):
    id: str
    name: str


class MessageContainer(TypedDict):
    type: Literal["message"]
    message_ts: str
    channel_id: str
    is_ephemeral: bool


class StateEntry(TypedDict):
    type: str
    selected_option: NotRequired[JSONDict | None]
    selected_options: NotRequired[list[JSONDict]]
    value: NotRequired[str | None]
    selected_date: NotRequired[str | None]
    selected_time: NotRequired[str | None]
    selected_date_time: NotRequired[int | None]


class StateValues(TypedDict):
    values: dict[str, dict[str, StateEntry]]


class ActionPayload(TypedDict):
    action_id: str
    block_id: str
    type: str
    action_ts: str
    value: NotRequired[str]
    text: NotRequired[JSONDict]
    style: NotRequired[str]
    confirm: NotRequired[JSONDict]
    selected_option: NotRequired[JSONDict | None]
    selected_options: NotRequired[list[JSONDict]]


class BlockActionsPayload(TypedDict):
    type: Literal["block_actions"]
    user: UserRef
    api_app_id: str
    token: str
    container: MessageContainer
    trigger_id: str
    team: TeamRef
    enterprise: None
    is_enterprise_install: bool
    channel: ChannelRef
    message: JSONDict
    state: StateValues
    response_url: str
    actions: list[ActionPayload]


class ViewSubmissionPayload(TypedDict):
    type: Literal["view_submission"]
    team: TeamRef
    user: UserRef
    api_app_id: str
    token: str
    trigger_id: str
    view: JSONDict
    response_urls: list[JSONDict]
    is_enterprise_install: bool
    enterprise: None


class SocketEnvelope(TypedDict):
    envelope_id: str
    type: str
    payload: JSONDict
    accepts_response_payload: bool
    retry_attempt: int
    retry_reason: str


class ConnectionInfo(TypedDict):
    app_id: str


class DebugInfo(TypedDict):
    host: str
    started: NotRequired[str]
    build_number: NotRequired[int]
    approximate_connection_time: NotRequired[int]


class HelloFrame(TypedDict):
    type: Literal["hello"]
    num_connections: int
    debug_info: DebugInfo
    connection_info: ConnectionInfo


class DisconnectFrame(TypedDict):
    type: Literal["disconnect"]
    reason: str
    debug_info: DebugInfo
