"""The Block Kit schema the emulator checks against: limits, and which fields, types and
placements each block, element and text object allows."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

MAX_BLOCKS = 50
MAX_VIEW_BLOCKS = 100
MAX_ID_LENGTH = 255
MAX_ACTIONS_ELEMENTS = 25
MAX_SECTION_TEXT = 3000
MAX_SECTION_FIELDS = 10
MAX_FIELD_TEXT = 2000
MAX_HEADER_TEXT = 150
MAX_CONTEXT_ELEMENTS = 10
MAX_CONTEXT_TEXT = 3000
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2000
MAX_BUTTON_URL = 3000
MAX_OPTION_TEXT = 75
MAX_OPTION_DESCRIPTION = 75
MAX_OPTION_VALUE = 150
MAX_OPTION_GROUPS = 100
MAX_PLACEHOLDER = 150
MAX_LABEL = 2000
MAX_ALT_TEXT = 2000
MAX_MARKDOWN_TEXT = 12_000
MAX_TEXT_INPUT = 3000
"""A plain_text_input's `max_length` (and `min_length`) may be at most this."""
MAX_VIEW_TITLE = 24
"""A modal's title, submit and close texts."""
MAX_PRIVATE_METADATA = 3000
MAX_CALLBACK_ID = 255
MAX_EXTERNAL_ID = 255

PLAIN = ("plain_text",)
EITHER = ("plain_text", "mrkdwn")
TEXT_FIELDS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "plain_text": frozenset({"type", "text", "emoji"}),
        "mrkdwn": frozenset({"type", "text", "verbatim"}),
    }
)

MAX_OPTIONS: Mapping[str, int] = MappingProxyType(
    {
        "radio_buttons": 10,
        "checkboxes": 10,
        "static_select": 100,
        "multi_static_select": 100,
        "overflow": 5,
    }
)
# Radio buttons and checkboxes show their options in the message, so these may be mrkdwn.
MRKDWN_OPTIONS = frozenset({"radio_buttons", "checkboxes"})

CONFIRM_LIMITS: Mapping[str, int] = MappingProxyType(
    {"title": 100, "text": 300, "confirm": 30, "deny": 30}
)

MULTI_SELECTS = frozenset(
    {
        "multi_static_select",
        "multi_external_select",
        "multi_users_select",
        "multi_conversations_select",
        "multi_channels_select",
    }
)
TEXT_INPUTS = frozenset(
    {"plain_text_input", "number_input", "email_text_input", "url_text_input", "rich_text_input"}
)

_COMMON = frozenset({"type", "action_id"})
_FOCUS = frozenset({"confirm", "focus_on_load"})
_SELECT = _COMMON | _FOCUS | {"placeholder"}
ELEMENT_FIELDS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "button": _COMMON | {"text", "value", "url", "style", "confirm", "accessibility_label"},
        "checkboxes": _COMMON | _FOCUS | {"options", "initial_options"},
        "radio_buttons": _COMMON | _FOCUS | {"options", "initial_option"},
        "static_select": _SELECT | {"options", "option_groups", "initial_option"},
        "multi_static_select": _SELECT
        | {"options", "option_groups", "initial_options", "max_selected_items"},
        "external_select": _SELECT | {"initial_option", "min_query_length"},
        "multi_external_select": _SELECT
        | {"initial_options", "min_query_length", "max_selected_items"},
        "users_select": _SELECT | {"initial_user"},
        "multi_users_select": _SELECT | {"initial_users", "max_selected_items"},
        "conversations_select": _SELECT
        | {"initial_conversation", "default_to_current_conversation", "filter"},
        "multi_conversations_select": _SELECT
        | {
            "initial_conversations",
            "default_to_current_conversation",
            "filter",
            "max_selected_items",
        },
        "channels_select": _SELECT | {"initial_channel", "response_url_enabled"},
        "multi_channels_select": _SELECT | {"initial_channels", "max_selected_items"},
        "overflow": _COMMON | {"options", "confirm"},
        "datepicker": _SELECT | {"initial_date"},
        "timepicker": _SELECT | {"initial_time", "timezone"},
        "datetimepicker": _COMMON | _FOCUS | {"initial_date_time"},
        "plain_text_input": _COMMON
        | {
            "placeholder",
            "initial_value",
            "multiline",
            "min_length",
            "max_length",
            "dispatch_action_config",
            "focus_on_load",
        },
        "number_input": _COMMON
        | {
            "is_decimal_allowed",
            "placeholder",
            "initial_value",
            "min_value",
            "max_value",
            "dispatch_action_config",
            "focus_on_load",
        },
        "email_text_input": _COMMON
        | {"placeholder", "initial_value", "dispatch_action_config", "focus_on_load"},
        "url_text_input": _COMMON
        | {"placeholder", "initial_value", "dispatch_action_config", "focus_on_load"},
        "rich_text_input": _COMMON
        | {"placeholder", "initial_value", "dispatch_action_config", "focus_on_load"},
        "image": frozenset({"type", "image_url", "slack_file", "alt_text"}),
    }
)
INTERACTIVE_TYPES = frozenset(ELEMENT_FIELDS) - {"image"}

# Where each element may go. Slack refuses the rest with invalid_blocks.
IN_ACTIONS = INTERACTIVE_TYPES - TEXT_INPUTS
IN_ACCESSORY = (INTERACTIVE_TYPES - TEXT_INPUTS) | {"image"}
IN_INPUT = INTERACTIVE_TYPES - {"button", "overflow"}

BLOCK_FIELDS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "section": frozenset({"type", "block_id", "text", "fields", "accessory", "expand"}),
        "header": frozenset({"type", "block_id", "text"}),
        "context": frozenset({"type", "block_id", "elements"}),
        "actions": frozenset({"type", "block_id", "elements"}),
        "divider": frozenset({"type", "block_id"}),
        "image": frozenset({"type", "block_id", "image_url", "slack_file", "alt_text", "title"}),
        "input": frozenset(
            {"type", "block_id", "label", "element", "hint", "optional", "dispatch_action"}
        ),
        "markdown": frozenset({"type", "block_id", "text"}),
        "rich_text": frozenset({"type", "block_id", "elements"}),
    }
)

VIEW_FIELDS = frozenset(
    {
        "type",
        "title",
        "blocks",
        "close",
        "submit",
        "private_metadata",
        "callback_id",
        "clear_on_close",
        "notify_on_close",
        "external_id",
        "submit_disabled",
    }
)
VIEW_TEXTS = ("title", "submit", "close")
VIEW_LIMITS: Mapping[str, int] = MappingProxyType(
    {
        "private_metadata": MAX_PRIVATE_METADATA,
        "callback_id": MAX_CALLBACK_ID,
        "external_id": MAX_EXTERNAL_ID,
    }
)
