"""An optional yes/no field nobody touched gets the same answer from every surface: its
default, else false. A checkbox or a toggle cannot say "not answered", so Slack, Teams and the
web page send what they show; Discord's select can be left empty, and core reads that the
same way (`FormField.untouched`), once for every surface."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from multidict import MultiDict, MultiDictProxy

from askbridge.adapters.discord import forms as discord_forms
from askbridge.adapters.slack.fill import modal, read_fill
from askbridge.adapters.slack.ids import FormMetadata
from askbridge.adapters.teams.form import form_elements
from askbridge.adapters.teams.form import read_fill as teams_read_fill
from askbridge.adapters.web import clicks, render
from askbridge.core.forms import Form, parse_form, read_input
from askbridge.core.intents import Fill
from askbridge.core.models import Request, Target
from askbridge.core.view import RequestView
from tests.emulators.discord import validate_modal
from tests.emulators.discord.modals import shown, submission
from tests.emulators.slack import validate_view
from tests.emulators.slack.interaction import initial_entry
from tests.web_person import typed_form

FORM = parse_form(
    {
        "message": "Before the deploy",
        "requested_schema": {
            "type": "object",
            "properties": {
                "canary": {"type": "boolean", "title": "Canary first"},
                "notify": {"type": "boolean", "title": "Notify", "default": True},
                "quiet": {"type": "boolean", "title": "Quiet", "default": False},
            },
        },
    }
)
UNTOUCHED = {"canary": False, "notify": True, "quiet": False}


def on_discord(form: Form) -> dict[str, Any]:
    data = discord_forms.fill_form("ask_t", form, None).to_dict()
    assert validate_modal(data) is None
    sent = submission(shown(data), {})
    given = discord_forms.filled(form, "ask_t", {"custom_id": sent["custom_id"], **sent})
    return read_input(form, given)


def on_slack(form: Form) -> dict[str, Any]:
    metadata = FormMetadata("req-1", "C0GENERAL", "1700000000.000100", {"team_id": "T1"})
    view: Any = modal(form, metadata)
    assert validate_view(view) == []
    state: Any = {
        block["block_id"]: {"field": initial_entry(block["element"])}
        for block in view["blocks"]
        if block["type"] == "input"
    }
    return read_input(form, read_fill(state))


def on_teams(form: Form) -> dict[str, Any]:
    # Teams' client sends each input's value as it stands.
    data = {e["id"]: str(e["value"]) for e in form_elements(form) if "value" in e}
    return read_input(form, teams_read_fill(form, data))


def on_the_web(form: Form) -> dict[str, Any]:
    request = Request(
        request_id="ask_form",
        questions=(),
        targets=(Target(platform="web"),),
        created_at=datetime(2030, 1, 1, tzinfo=UTC),
        form=form,
    )
    page = render.typed_form(RequestView.of(request), form, token="0" * 64, version=1)
    sent = [*typed_form(page).data, ("action", "submit"), ("name", "Ada")]
    intent = clicks.parse(MultiDictProxy(MultiDict[Any](sent))).intent
    assert isinstance(intent, Fill)
    return read_input(form, intent.values)


def test_a_yes_no_nobody_touched_is_its_default_else_false_on_every_surface() -> None:
    for surface in (on_discord, on_slack, on_teams, on_the_web):
        assert surface(FORM) == UNTOUCHED, surface.__name__


def test_a_discord_select_emptied_is_the_default_as_an_untouched_box_is() -> None:
    data = discord_forms.fill_form("ask_t", FORM, None).to_dict()
    sent = submission(shown(data), {"Canary first": [], "Notify": [], "Quiet": []})
    given = discord_forms.filled(FORM, "ask_t", {"custom_id": sent["custom_id"], **sent})
    assert given == {}
    assert read_input(FORM, given) == UNTOUCHED
