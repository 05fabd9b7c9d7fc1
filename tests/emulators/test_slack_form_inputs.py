"""The Slack emulator holds a modal's typed inputs (numbers, dates, dates and times, email
addresses, URLs, checkboxes and menus) to Slack's rules: what views.open and views.update
refuse, what Slack's client checks before sending, and what a submission carries."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from .slack import SlackEmulator, validate_view
from .slack.interaction import PICKERS, VALUE_INPUTS


@pytest.fixture
async def slack() -> AsyncIterator[SlackEmulator]:
    async with SlackEmulator() as emulator:
        emulator.add_user("U1", "alice")
        yield emulator


@pytest.fixture
def client(slack: SlackEmulator) -> AsyncWebClient:
    return AsyncWebClient(token=slack.identity.bot_token, base_url=slack.api_url)


def plain(text: str) -> dict[str, Any]:
    return {"type": "plain_text", "text": text}


def option(label: str, value: str) -> dict[str, Any]:
    return {"text": plain(label), "value": value}


def field(block_id: str, element: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "type": "input",
        "block_id": block_id,
        "label": plain(block_id.title()),
        "element": {"action_id": "v", **element},
        **extra,
    }


def number(**extra: Any) -> dict[str, Any]:
    return field("amount", {"type": "number_input", "is_decimal_allowed": False, **extra})


def modal(*blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    base = {"type": "modal", "title": plain("Form"), "submit": plain("Send")}
    return {**base, "blocks": list(blocks), **extra}


FRUIT = [option("Apple", "apple"), option("Pear", "pear"), option("Plum", "plum")]


def every_kind() -> dict[str, Any]:
    """A modal with one input of each kind a form uses, each at its documented limits."""
    return modal(
        number(min_value="-5", max_value="10", initial_value="3"),
        field(
            "price",
            {"type": "number_input", "is_decimal_allowed": True, "min_value": "0.5"},
            optional=True,
        ),
        field("day", {"type": "datepicker", "initial_date": "2026-12-07"}),
        field("at", {"type": "datetimepicker", "initial_date_time": 1_796_000_000}),
        field("mail", {"type": "email_text_input", "initial_value": "a@example.com"}),
        field("link", {"type": "url_text_input"}, optional=True),
        field(
            "agree",
            {"type": "checkboxes", "options": [option("Yes", "yes")]},
            optional=True,
        ),
        field(
            "one",
            {"type": "static_select", "options": FRUIT, "initial_option": FRUIT[1]},
        ),
        field(
            "many",
            {
                "type": "multi_static_select",
                "options": FRUIT,
                "initial_options": FRUIT[:2],
                "max_selected_items": 2,
            },
        ),
        field("words", {"type": "plain_text_input", "multiline": True, "min_length": 2}),
        private_metadata="m" * 3000,
        callback_id="c" * 255,
    )


MENU_OF_101 = [option(f"Item {i}", str(i)) for i in range(101)]
PROBES: dict[str, tuple[dict[str, Any], str]] = {
    "number without is_decimal_allowed": (
        modal(field("amount", {"type": "number_input"})),
        "missing required field: is_decimal_allowed",
    ),
    "is_decimal_allowed not a boolean": (
        modal(number(is_decimal_allowed="no")),
        "must be a boolean [json-pointer:/view/blocks/0/element/is_decimal_allowed]",
    ),
    "min_value a number, not a string": (
        modal(number(min_value=1)),
        "min_value must be a string holding a whole number",
    ),
    "a decimal bound without decimals": (
        modal(number(max_value="2.5")),
        "max_value must be a string holding a whole number",
    ),
    "min_value over max_value": (
        modal(number(min_value="5", max_value="4")),
        "min_value must not be greater than max_value",
    ),
    "initial_value out of bounds": (
        modal(number(max_value="4", initial_value="5")),
        "initial_value must be between min_value and max_value",
    ),
    "initial_value not a number": (
        modal(number(initial_value="five")),
        "initial_value must be a string holding",
    ),
    "initial_date not YYYY-MM-DD": (
        modal(field("day", {"type": "datepicker", "initial_date": "07/12/2026"})),
        "initial_date must be a date as YYYY-MM-DD",
    ),
    "initial_date not a date": (
        modal(field("day", {"type": "datepicker", "initial_date": "2026-02-30"})),
        "initial_date must be a date",
    ),
    "initial_date_time as text": (
        modal(field("at", {"type": "datetimepicker", "initial_date_time": "2026-12-07T10:00"})),
        "initial_date_time must be a UNIX timestamp in seconds",
    ),
    "initial_date_time in milliseconds": (
        modal(field("at", {"type": "datetimepicker", "initial_date_time": 1_796_000_000_000})),
        "at most 10 digits",
    ),
    "a datetimepicker has no placeholder": (
        modal(field("at", {"type": "datetimepicker", "placeholder": plain("When?")})),
        "invalid additional property: placeholder",
    ),
    "email initial_value not a string": (
        modal(field("mail", {"type": "email_text_input", "initial_value": 7})),
        "initial_value must be a string",
    ),
    "a url input has no max_length": (
        modal(field("link", {"type": "url_text_input", "max_length": 10})),
        "invalid additional property: max_length",
    ),
    "eleven checkboxes": (
        modal(
            field(
                "agree",
                {"type": "checkboxes", "options": [option(str(i), str(i)) for i in range(11)]},
            )
        ),
        "must be less than 11 items",
    ),
    "no checkboxes": (
        modal(field("agree", {"type": "checkboxes", "options": []})),
        "must provide at least 1 item",
    ),
    "a ticked box not among the options": (
        modal(
            field(
                "agree",
                {
                    "type": "checkboxes",
                    "options": [option("Yes", "yes")],
                    "initial_options": [option("No", "no")],
                },
            )
        ),
        "must match one of the options exactly",
    ),
    "101 menu options": (
        modal(field("one", {"type": "static_select", "options": MENU_OF_101})),
        "must be less than 101 items",
    ),
    "option text over 75": (
        modal(field("one", {"type": "static_select", "options": [option("o" * 76, "o")]})),
        "must be less than 76 characters",
    ),
    "mrkdwn option in a menu": (
        modal(
            field(
                "one",
                {
                    "type": "static_select",
                    "options": [{"text": {"type": "mrkdwn", "text": "*a*"}, "value": "a"}],
                },
            )
        ),
        "must be plain_text, not mrkdwn",
    ),
    "option value over 150": (
        modal(field("one", {"type": "static_select", "options": [option("A", "v" * 151)]})),
        "must be less than 151 characters",
    ),
    "initial option not in the menu": (
        modal(
            field(
                "one",
                {"type": "static_select", "options": FRUIT, "initial_option": option("Fig", "f")},
            )
        ),
        "must match one of the options exactly",
    ),
    "max_selected_items 0": (
        modal(
            field(
                "many",
                {"type": "multi_static_select", "options": FRUIT, "max_selected_items": 0},
            )
        ),
        "max_selected_items must be an integer of at least 1",
    ),
    "more initial options than max_selected_items": (
        modal(
            field(
                "many",
                {
                    "type": "multi_static_select",
                    "options": FRUIT,
                    "initial_options": FRUIT,
                    "max_selected_items": 2,
                },
            )
        ),
        "initial_options holds more than max_selected_items (2)",
    ),
    "duplicate block_id": (
        modal(number(), number()),
        "duplicate block_id 'amount'",
    ),
    "block_id over 255": (
        modal(number() | {"block_id": "b" * 256}),
        "/view/blocks/0/block_id",
    ),
}


@pytest.mark.parametrize("case", sorted(PROBES))
async def test_views_open_refuses_the_typed_inputs_slack_refuses(
    slack: SlackEmulator, client: AsyncWebClient, case: str
) -> None:
    shown, expected = PROBES[case]
    trigger = slack.views.issue_trigger("U1")
    with pytest.raises(SlackApiError) as error:
        await client.views_open(trigger_id=trigger, view=shown)
    answer = error.value.response
    assert answer["error"] == "invalid_arguments"
    assert any(expected in e for e in answer["errors"]), answer["errors"]
    assert slack.open_views("U1") == []


async def test_every_input_kind_at_its_limits_opens_and_updates(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    assert validate_view(every_kind()) == []
    opened = await client.views_open(trigger_id=slack.views.issue_trigger("U1"), view=every_kind())
    view_id = opened["view"]["id"]
    view = slack.open_views("U1")[0]
    # What a submission would carry for inputs nobody touched: their initial values.
    values = slack.views.to_slack(view)["state"]["values"]
    assert values["amount"]["v"] == {"type": "number_input", "value": "3"}
    assert values["day"]["v"] == {"type": "datepicker", "selected_date": "2026-12-07"}
    assert values["at"]["v"] == {"type": "datetimepicker", "selected_date_time": 1_796_000_000}
    assert values["agree"]["v"] == {"type": "checkboxes", "selected_options": []}
    assert values["one"]["v"]["selected_option"] == FRUIT[1]
    assert values["many"]["v"]["selected_options"] == FRUIT[:2]

    with pytest.raises(SlackApiError) as error:
        await client.views_update(view_id=view_id, view=modal(number(min_value="x")))
    assert error.value.response["error"] == "invalid_arguments"
    assert slack.block_rejections[-1].source == "views.update"
    with pytest.raises(SlackApiError) as error:
        await client.views_update(view_id=view_id, hash="stale", view=every_kind())
    assert error.value.response["error"] == "hash_conflict"
    with pytest.raises(SlackApiError) as error:
        await client.views_update(view_id="VNOPE", view=every_kind())
    assert error.value.response["error"] == "not_found"
    updated = await client.views_update(
        view_id=view_id, hash=opened["view"]["hash"], view=modal(number())
    )
    assert updated["view"]["id"] == view_id
    assert len(view.versions) == 2


async def test_slacks_client_checks_typed_inputs_before_sending(
    slack: SlackEmulator, client: AsyncWebClient
) -> None:
    await client.views_open(trigger_id=slack.views.issue_trigger("U1"), view=every_kind())
    view = slack.open_views("U1")[0]
    alice = slack.person("U1")
    cases: list[tuple[dict[str, Any], dict[str, str]]] = [
        ({"text": {"Amount": "11"}}, {"amount": "Please enter a number of at most 10."}),
        ({"text": {"Amount": "-6"}}, {"amount": "Please enter a number of at least -5."}),
        ({"text": {"Amount": "2.5"}}, {"amount": "Please enter a whole number."}),
        ({"text": {"Price": "0.25"}}, {"price": "Please enter a number of at least 0.5."}),
        ({"text": {"Mail": "not an address"}}, {"mail": "Please enter a valid email address."}),
        ({"text": {"Link": "javascript:alert(1)"}}, {"link": "Please enter a valid URL."}),
        ({"choose": {"Many": ["Apple", "Pear", "Plum"]}}, {"many": "Please select up to 2"}),
        ({"pick": {"Day": None}}, {"day": "Please complete this required field."}),
        ({"choose": {"One": []}}, {"one": "Please complete this required field."}),
    ]
    for given, expected in cases:
        # Each case starts from what the modal was opened with.
        view.state.choices.clear()
        typed = {"Words": "fine", **given.get("text", {})}
        sent = await alice.submit_view(
            view, text=typed, choose=given.get("choose"), pick=given.get("pick")
        )
        assert sent.delivery is None, given
        assert set(sent.errors) == set(expected), (given, sent.errors)
        for key, words in expected.items():
            assert sent.errors[key].startswith(words), (given, sent.errors)

    view.state.choices.clear()
    state = view.state
    for name, text in {
        "Amount": "10",
        "Price": "2.75",
        "Words": "ok",
        "Link": "https://x.io",
    }.items():
        state.type_text(view.find_input(name, VALUE_INPUTS), text)
    state.pick(view.find_input("Day", frozenset(PICKERS)), "2027-01-02")
    state.pick(view.find_input("At", frozenset(PICKERS)), 1_800_000_000)
    agree = view.find_input("Agree", frozenset({"checkboxes"}))
    state.choose(agree, [option("Yes", "yes")])
    assert view.client_errors() == {}
    values = slack.views.to_slack(view)["state"]["values"]
    assert values["amount"]["v"]["value"] == "10"
    assert values["price"]["v"]["value"] == "2.75"
    assert values["day"]["v"]["selected_date"] == "2027-01-02"
    assert values["at"]["v"]["selected_date_time"] == 1_800_000_000
    assert values["agree"]["v"]["selected_options"] == [option("Yes", "yes")]
