"""The bot's side of an interaction: callback, followups and @original, by token."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .httpkit import (
    UNKNOWN_INTERACTION,
    UNKNOWN_MESSAGE,
    UNKNOWN_WEBHOOK,
    ApiError,
    unknown,
)
from .interactions import MODAL_SUBMIT_INTERACTION, InteractionCallback, InteractionState
from .messages import Messenger, Rejection
from .modals import shown, validate_modal
from .payloads import JSONObject, user_payload
from .registry import Registry
from .store import Message, MessageStore
from .validation import EPHEMERAL, LOADING
from .waiting import Pulse

CHANNEL_MESSAGE_WITH_SOURCE = 4
DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE = 5
DEFERRED_UPDATE_MESSAGE = 6
UPDATE_MESSAGE = 7
MODAL = 9


class InteractionResponder:
    def __init__(
        self,
        *,
        registry: Registry,
        store: MessageStore,
        messenger: Messenger,
        pulse: Pulse,
        application_id: int,
        clock: Callable[[], float],
    ) -> None:
        self._registry = registry
        self._store = store
        self._messenger = messenger
        self._pulse = pulse
        self._application_id = application_id
        self._clock = clock
        self._by_id: dict[int, InteractionState] = {}
        self._by_token: dict[str, InteractionState] = {}

    def register(self, state: InteractionState) -> None:
        self._by_id[state.id] = state
        self._by_token[state.token] = state

    # --- POST /interactions/{id}/{token}/callback -------------------------------------

    def callback(self, interaction_id: int, token: str, body: Mapping[str, Any]) -> JSONObject:
        state = self._by_id.get(interaction_id)
        if state is None or state.token != token:
            raise unknown("interaction", UNKNOWN_INTERACTION)
        message = self.respond(state, body)
        return self._callback_response(state, message)

    def respond(self, state: InteractionState, body: Mapping[str, Any]) -> Message | None:
        """Apply the bot's initial response, from the callback route or, in HTTP interactions
        mode, from the reply to Discord's POST; ApiError (recorded as refused) if Discord
        would not take it."""
        kind = body.get("type")
        if state.callback is not None:
            self.refuse(state, f"second response (type {kind}) after type {state.callback.type}")
            raise ApiError(400, 40060, "Interaction has already been acknowledged.")
        late = self._clock() - state.deadline
        if late > 0:
            self.refuse(state, f"type {kind} response arrived {late:.2f} s after the 3 s window")
            raise unknown("interaction", UNKNOWN_INTERACTION)
        data = body.get("data") or {}
        if not isinstance(data, dict):
            raise ApiError(400, 50035, "Invalid Form Body", _error("data", "DICT_TYPE_CONVERT"))
        where = f"interaction callback type {kind}"
        try:
            message = self._apply(state, kind, data, where)
        except ApiError as exc:
            self.refuse(state, f"type {kind} response refused: {exc.code} {exc.message}")
            raise
        state.callback = InteractionCallback(int(kind or 0), data)
        self._pulse.notify()
        return message

    def _apply(
        self, state: InteractionState, kind: object, data: JSONObject, where: str
    ) -> Message | None:
        channel = self._registry.channel(state.channel_id)
        if kind == CHANNEL_MESSAGE_WITH_SOURCE:
            message = self._post(state, data, where)
            state.original_message_id = message.id
            return message
        if kind == DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE:
            flags = LOADING | (int(data.get("flags") or 0) & EPHEMERAL)
            message = self._messenger.post(
                channel,
                {"content": "", "flags": flags},
                where=where,
                ephemeral_for=state.user_id if flags & EPHEMERAL else None,
                interaction_id=state.id,
                extra={**self._metadata(state), "flags": flags},
                validate=False,
            )
            state.original_message_id = message.id
            return message
        if kind == DEFERRED_UPDATE_MESSAGE:
            state.original_message_id = state.source_message_id
            return None
        if kind == UPDATE_MESSAGE:
            source = self._store.get(state.source_message_id)
            if source is None:
                raise unknown("message", UNKNOWN_MESSAGE)
            state.original_message_id = source.id
            return self._messenger.edit(source, data, where=where)
        if kind == MODAL:
            if state.kind == MODAL_SUBMIT_INTERACTION:
                raise ApiError(
                    400,
                    50035,
                    "Invalid Form Body",
                    _error(
                        "type",
                        "INTERACTION_CALLBACK_TYPE_INVALID",
                        "A modal submission cannot be answered with another modal.",
                    ),
                )
            invalid = validate_modal(data)
            if invalid is not None:
                self._messenger.rejections.append(Rejection(where, invalid, data))
                raise ApiError(400, invalid.code, invalid.message, invalid.errors or None)
            state.modal = shown(data)
            return None
        raise ApiError(
            400,
            50035,
            "Invalid Form Body",
            _error(
                "type", "BASE_TYPE_CHOICES", f"Value must be one of (4, 5, 6, 7, 9); got {kind!r}."
            ),
        )

    def _callback_response(self, state: InteractionState, message: Message | None) -> JSONObject:
        assert state.callback is not None
        interaction: JSONObject = {"id": str(state.id), "type": state.kind}
        response: JSONObject = {"interaction": interaction}
        if message is not None:
            interaction["response_message_id"] = str(message.id)
            interaction["response_message_loading"] = message.is_loading
            interaction["response_message_ephemeral"] = message.is_ephemeral
            response["resource"] = {"type": state.callback.type, "message": message.payload}
        return response

    # --- /webhooks/{application_id}/{token} ----------------------------------------

    def followup(self, application_id: int, token: str, body: Mapping[str, Any]) -> Message:
        state = self._state_for_webhook(application_id, token)
        original = self._original(state)
        if original is not None and original.is_loading:
            # The first followup after a "thinking" defer replaces the loading message.
            changes = {k: v for k, v in body.items() if k != "flags"}
            return self._messenger.edit(original, changes, where="followup replacing a deferral")
        message = self._post(state, body, "followup message")
        state.followup_ids.append(message.id)
        self._pulse.notify()
        return message

    def webhook_message(self, application_id: int, token: str, message_id: str) -> Message:
        state = self._state_for_webhook(application_id, token)
        if message_id == "@original":
            original = self._original(state)
            if original is None:
                raise unknown("message", UNKNOWN_MESSAGE)
            return original
        wanted = int(message_id) if message_id.isdigit() else -1
        if wanted not in (state.original_message_id, *state.followup_ids):
            raise unknown("message", UNKNOWN_MESSAGE)
        found = self._store.get(wanted)
        if found is None:
            raise unknown("message", UNKNOWN_MESSAGE)
        return found

    def edit_webhook_message(
        self, application_id: int, token: str, message_id: str, body: Mapping[str, Any]
    ) -> Message:
        message = self.webhook_message(application_id, token, message_id)
        return self._messenger.edit(message, body, where=f"webhook edit of {message_id}")

    def delete_webhook_message(self, application_id: int, token: str, message_id: str) -> None:
        self._messenger.delete(self.webhook_message(application_id, token, message_id))

    # --- helpers -----------------------------------------------------------------------

    def _post(self, state: InteractionState, body: Mapping[str, Any], where: str) -> Message:
        ephemeral = bool(int(body.get("flags") or 0) & EPHEMERAL)
        return self._messenger.post(
            self._registry.channel(state.channel_id),
            body,
            where=where,
            ephemeral_for=state.user_id if ephemeral else None,
            interaction_id=state.id,
            extra=self._metadata(state),
        )

    def _metadata(self, state: InteractionState) -> JSONObject:
        return {
            "webhook_id": str(self._application_id),
            "application_id": str(self._application_id),
            "interaction_metadata": self._interaction_metadata(state),
        }

    def _interaction_metadata(self, state: InteractionState) -> JSONObject:
        """A message component's interaction names the message it was on; a modal's
        submission names instead the interaction that opened the modal, which does
        (`resources/message.mdx`, Message Interaction Metadata)."""
        owners = state.payload["authorizing_integration_owners"]
        metadata: JSONObject = {
            "id": str(state.id),
            "type": state.kind,
            "user": user_payload(self._registry.user(state.user_id)),
            "authorizing_integration_owners": dict(owners),
        }
        if state.kind == MODAL_SUBMIT_INTERACTION and state.triggered_by is not None:
            metadata["triggering_interaction_metadata"] = self._interaction_metadata(
                state.triggered_by
            )
        else:
            metadata["interacted_message_id"] = str(state.source_message_id)
        return metadata

    def _original(self, state: InteractionState) -> Message | None:
        if state.original_message_id is None:
            return None
        return self._store.get(state.original_message_id)

    def _state_for_webhook(self, application_id: int, token: str) -> InteractionState:
        state = self._by_token.get(token)
        if state is None or application_id != self._application_id:
            raise unknown("Webhook", UNKNOWN_WEBHOOK)
        if self._clock() > state.token_expires:
            raise ApiError(401, 50027, "Invalid Webhook Token")
        if state.callback is None:
            # The interaction webhook only exists once the interaction was acknowledged.
            raise unknown("Webhook", UNKNOWN_WEBHOOK)
        return state

    def refuse(self, state: InteractionState, why: str) -> None:
        state.refused.append(why)
        self._pulse.notify()


def _error(field: str, code: str, message: str = "Invalid value.") -> JSONObject:
    return {field: {"_errors": [{"code": code, "message": message}]}}
