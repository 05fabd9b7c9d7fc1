"""The Block Kit JSON askbridge sends, and the `state.values` it reads back from a click.

Typed apart from the domain models: these are wire shapes, built by `render` and `forms` and
read by `clicks`, and never leave this package.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

# Limits Slack enforces (it answers `invalid_blocks` past them), from the Block Kit reference.
MAX_BLOCKS = 50
MAX_ID = 255
MAX_SECTION_TEXT = 3000
MAX_CONTEXT_TEXT = 3000
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2000
MAX_BUTTON_URL = 3000
MAX_OPTION_TEXT = 75
MAX_OPTION_DESCRIPTION = 75
MAX_OPTION_VALUE = 150
MAX_OPTIONS = 10
MAX_ACTIONS_ELEMENTS = 25
MAX_CONFIRM_TITLE = 100
MAX_CONFIRM_TEXT = 300
MAX_CONFIRM_BUTTON = 30
# Slack truncates (not rejects) `text` past 40,000 characters; a notification needs far less.
MAX_FALLBACK_TEXT = 3000
MAX_VIEW_TITLE = 24
"""A modal's title, submit and close texts."""
MAX_LABEL = 2000
"""An input block's label and hint."""
MAX_PLACEHOLDER = 150
MAX_TEXT_INPUT = 3000
"""The most a plain_text_input takes (its max_length, and its initial_value)."""
MAX_PRIVATE_METADATA = 3000
MAX_MENU_OPTIONS = 100


class PlainText(TypedDict):
    type: Literal["plain_text"]
    text: str
    emoji: NotRequired[bool]


class Mrkdwn(TypedDict):
    type: Literal["mrkdwn"]
    text: str


class Option(TypedDict):
    text: PlainText
    value: str
    description: NotRequired[PlainText]


class Confirm(TypedDict):
    title: PlainText
    text: PlainText
    confirm: PlainText
    deny: PlainText
    style: NotRequired[Literal["primary", "danger"]]


class Button(TypedDict):
    type: Literal["button"]
    action_id: str
    text: PlainText
    value: NotRequired[str]
    url: NotRequired[str]
    style: NotRequired[Literal["primary", "danger"]]
    confirm: NotRequired[Confirm]


class RadioButtons(TypedDict):
    type: Literal["radio_buttons"]
    action_id: str
    options: list[Option]
    initial_option: NotRequired[Option]
    focus_on_load: NotRequired[bool]


class Checkboxes(TypedDict):
    type: Literal["checkboxes"]
    action_id: str
    options: list[Option]
    initial_options: NotRequired[list[Option]]
    focus_on_load: NotRequired[bool]


class PlainTextInput(TypedDict):
    type: Literal["plain_text_input"]
    action_id: str
    max_length: int
    multiline: bool
    min_length: NotRequired[int]
    initial_value: NotRequired[str]
    placeholder: NotRequired[PlainText]
    focus_on_load: NotRequired[bool]


class NumberInput(TypedDict):
    type: Literal["number_input"]
    action_id: str
    is_decimal_allowed: bool
    min_value: NotRequired[str]
    max_value: NotRequired[str]
    initial_value: NotRequired[str]


class DatePicker(TypedDict):
    type: Literal["datepicker"]
    action_id: str
    initial_date: NotRequired[str]
    """YYYY-MM-DD."""


class DateTimePicker(TypedDict):
    type: Literal["datetimepicker"]
    action_id: str
    initial_date_time: NotRequired[int]
    """UNIX seconds."""


class AddressInput(TypedDict):
    """An email_text_input or a url_text_input: Slack's client checks what is typed."""

    type: Literal["email_text_input", "url_text_input"]
    action_id: str
    initial_value: NotRequired[str]


class StaticSelect(TypedDict):
    type: Literal["static_select"]
    action_id: str
    options: list[Option]
    placeholder: NotRequired[PlainText]
    initial_option: NotRequired[Option]


class MultiStaticSelect(TypedDict):
    type: Literal["multi_static_select"]
    action_id: str
    options: list[Option]
    placeholder: NotRequired[PlainText]
    initial_options: NotRequired[list[Option]]
    max_selected_items: NotRequired[int]


Element = Button | RadioButtons | Checkboxes
FormInput = (
    PlainTextInput
    | NumberInput
    | DatePicker
    | DateTimePicker
    | AddressInput
    | Checkboxes
    | StaticSelect
    | MultiStaticSelect
)
"""The inputs of a typed form's modal."""


class SectionBlock(TypedDict):
    type: Literal["section"]
    block_id: str
    text: Mrkdwn


class ContextBlock(TypedDict):
    type: Literal["context"]
    block_id: str
    elements: list[PlainText | Mrkdwn]


class ActionsBlock(TypedDict):
    type: Literal["actions"]
    block_id: str
    elements: list[Element]


class TextStyle(TypedDict, total=False):
    bold: bool
    italic: bool


class RichText(TypedDict):
    type: Literal["text"]
    text: str
    style: NotRequired[TextStyle]


class RichUser(TypedDict):
    type: Literal["user"]
    user_id: str


class RichUsergroup(TypedDict):
    type: Literal["usergroup"]
    usergroup_id: str


class RichDate(TypedDict):
    type: Literal["date"]
    timestamp: int
    format: str
    fallback: str


class RichEmoji(TypedDict):
    type: Literal["emoji"]
    name: str


class RichLink(TypedDict):
    type: Literal["link"]
    url: str
    text: str


RichInline = RichText | RichUser | RichUsergroup | RichDate | RichEmoji | RichLink


class RichSection(TypedDict):
    type: Literal["rich_text_section"]
    elements: list[RichInline]


class RichList(TypedDict):
    type: Literal["rich_text_list"]
    style: Literal["bullet", "ordered"]
    elements: list[RichSection]


class RichPreformatted(TypedDict):
    type: Literal["rich_text_preformatted"]
    elements: list[RichText]


RichElement = RichSection | RichList | RichPreformatted


class RichTextBlock(TypedDict):
    type: Literal["rich_text"]
    block_id: str
    elements: list[RichElement]


Block = SectionBlock | ContextBlock | ActionsBlock | RichTextBlock


class MessagePayload(TypedDict):
    """The arguments of `chat.postMessage` / `chat.update` that carry content."""

    text: str
    blocks: list[Block]


class InputBlock(TypedDict):
    type: Literal["input"]
    block_id: str
    label: PlainText
    element: FormInput | RadioButtons
    hint: NotRequired[PlainText]
    optional: NotRequired[bool]


class ModalView(TypedDict):
    """A modal, as `views.open` takes it and a `response_action: update` replaces it."""

    type: Literal["modal"]
    callback_id: str
    title: PlainText
    close: PlainText
    blocks: list[InputBlock | RichTextBlock]
    submit: NotRequired[PlainText]
    private_metadata: NotRequired[str]


# ---- what Slack sends (only the fields askbridge reads) ---------------------------------------


class SelectedOption(TypedDict):
    value: str


class StateEntry(TypedDict):
    type: str
    selected_option: NotRequired[SelectedOption | None]
    selected_options: NotRequired[list[SelectedOption]]
    value: NotRequired[str | None]
    selected_date: NotRequired[str | None]
    selected_date_time: NotRequired[int | None]


StateValues = dict[str, dict[str, StateEntry]]
"""`state.values`: block_id -> action_id -> the element's current value in the clicker's client
(in a message), or in the submitted modal."""
