"""A request as a Discord message: one Components V2 container, rendered from the store.

While waiting: the context, then per question its header, text and options (descriptions in
the text for buttons, as option descriptions in a select) followed by its controls, then
Submit (unless one click answers) and Cancel; above the controls, the request's policy when
it has one (who may answer, the votes so far out of the quorum, what the deadline does). Once
ended: no controls; each header with its answer, and who ended it and when (the voters, or
"decided by timeout"). 4 questions x 4 options come to 31 of Discord's 40 components; all
texts together stay within Discord's 4000 characters: the texts the agent wrote are
shortened to make room, never the policy, which is bounded on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import discord
from discord import ui

from adapters.discord.approvals import matching, names, policy_lines, tally_lines, timestamp
from adapters.discord.clicks import is_one_click
from adapters.discord.codec import ComponentId
from adapters.discord.items import ActionButton, ChoiceSelect
from adapters.discord.text import close_fences, fit, shorten
from core.errors import describe_end
from core.models import Person, Request, Status, UserQuestion

MAX_TEXT = 4000
"""All TextDisplays of a Components V2 message together."""
MAX_BUTTON_LABEL = 80
MAX_OPTION_TEXT = 100
"""A select option's label, and its description."""
MAX_PLACEHOLDER = 150
MAX_ANSWER = 300
MAX_NAME = 100

COLOURS = {
    Status.WAITING: discord.Colour.blurple(),
    Status.ANSWERED: discord.Colour.green(),
    Status.CANCELLED: discord.Colour.red(),
    Status.EXPIRED: discord.Colour.light_grey(),
    Status.WITHDRAWN: discord.Colour.light_grey(),
}

Item = ui.Item[Any]
Style = discord.ButtonStyle
Fields = dict[tuple[object, ...], str]
"""Texts the agent wrote with no length limit, by where they go; these are what gets shortened."""


def render(request: Request) -> ui.LayoutView:
    """The whole message for the request's current state."""
    items = _waiting(request) if request.status is Status.WAITING else _ended(request)
    view = ui.LayoutView(timeout=None)
    view.add_item(ui.Container(*items, accent_colour=COLOURS[request.status]))
    return view


# --- waiting ------------------------------------------------------------------------------


def _waiting(request: Request) -> list[Item]:
    fields: Fields = {("context",): close_fences((request.context or "").strip())}
    for q, question in enumerate(request.questions):
        fields["question", q] = close_fences(question.question.strip())
        if not question.multi_select:
            for o, option in enumerate(question.options):
                fields["description", q, o] = shorten(option.description.strip(), MAX_OPTION_TEXT)
    texts = _fitted(fields, lambda f: _waiting_texts(request, f))

    items: list[Item] = []
    if texts[0]:
        items.append(ui.TextDisplay(texts[0]))
    for q, question in enumerate(request.questions):
        items.append(ui.TextDisplay(texts[q + 1]))
        items.append(_controls(request, q, question))
    items.append(ui.Separator())
    items.append(ui.TextDisplay(texts[-1]))
    request_id = request.request_id
    buttons = [ActionButton.make(ComponentId.cancel(request_id), "Cancel", Style.danger)]
    if not is_one_click(request):
        submit = ActionButton.make(ComponentId.submit(request_id), "Submit", Style.success)
        buttons.insert(0, submit)
    items.append(ui.ActionRow(*buttons))
    return items


def _waiting_texts(request: Request, fields: Fields) -> list[str]:
    """[context, one text per question, the hint]; the context may be empty."""
    texts = [fields["context",]]
    for q, question in enumerate(request.questions):
        lines = [f"**{question.header}** · {fields['question', q]}".rstrip()]
        if not question.multi_select:
            for o, option in enumerate(question.options):
                line = f"- **{shorten(option.label, MAX_BUTTON_LABEL)}**"
                description = fields["description", q, o]
                lines.append(f"{line} — {description}" if description else line)
        texts.append("\n".join(lines))
    texts.append("\n".join([*policy_lines(request), _hint(request)]))
    return texts


def _hint(request: Request) -> str:
    cancel = "Cancel tells the agent not to wait."
    if request.policy.quorum > 1:
        if is_one_click(request):
            return f"-# One click votes; click another option to change your vote. {cancel}"
        return (
            "-# Your choices are yours alone until you press Submit, which casts your vote; "
            f"submit again to change it. {cancel}"
        )
    if is_one_click(request):
        return f"-# One click answers. {cancel}"
    return f"-# Your choices are yours alone until you press Submit. {cancel}"


def _controls(request: Request, q: int, question: UserQuestion) -> Item:
    request_id = request.request_id
    if question.multi_select:
        options = [
            discord.SelectOption(
                label=shorten(option.label, MAX_OPTION_TEXT),
                value=str(o),
                description=shorten(option.description.strip(), MAX_OPTION_TEXT) or None,
            )
            for o, option in enumerate(question.options)
        ]
        placeholder = shorten(f"{question.header}: choose one or more", MAX_PLACEHOLDER)
        select = ChoiceSelect.make(ComponentId.pick(request_id, q), placeholder, options)
        return ui.ActionRow(select)
    style = Style.primary if is_one_click(request) else Style.secondary
    return ui.ActionRow(
        *(
            ActionButton.make(
                ComponentId.choose(request_id, q, o), shorten(option.label, MAX_BUTTON_LABEL), style
            )
            for o, option in enumerate(question.options)
        )
    )


# --- ended --------------------------------------------------------------------------------


def _ended(request: Request) -> list[Item]:
    fields: Fields = {("context",): close_fences((request.context or "").strip())}
    for q, question in enumerate(request.questions):
        fields["question", q] = close_fences(question.question.strip())
    texts = _fitted(fields, lambda f: _ended_texts(request, f))
    return [ui.TextDisplay(text) for text in texts if text]


def _ended_texts(request: Request, fields: Fields) -> list[str]:
    """[context, one text per question, how it ended]; the context may be empty."""
    texts = [fields["context",]]
    answers = request.answers or {}
    for q, question in enumerate(request.questions):
        text = f"**{question.header}** · {fields['question', q]}".rstrip()
        if question.header in answers:
            text += f"\n→ **{shorten(answers[question.header], MAX_ANSWER)}**"
        texts.append(text)
    texts.append("\n".join([ending(request), *_other_votes(request)]))
    return texts


def ending(request: Request) -> str:
    """Who ended the request, how, and when (in each reader's own time zone)."""
    when = _timestamp(request.ended_at)
    match request.status:
        case Status.ANSWERED if request.decided_by_timeout:
            return f"⏱️ Decided by timeout · {when}"
        case Status.ANSWERED if request.policy.quorum > 1 and request.answers is not None:
            voters = matching(request, request.answers) or (
                [request.answered_by] if request.answered_by else []
            )
            return f"✅ Answered by {names(voters, bold=True)} · {when}"
        case Status.ANSWERED:
            return f"✅ Answered by {_name(request.answered_by)} · {when}"
        case Status.CANCELLED:
            return f"✖️ Cancelled by {_name(request.cancelled_by)} · {when}"
        case Status.EXPIRED:
            return f"⌛ Expired unanswered · {when}"
        case Status.WITHDRAWN:
            return f"↩️ Withdrawn by the agent · {when}"
        case _:
            return describe_end(request)


def _other_votes(request: Request) -> list[str]:
    """The votes that did not decide the request, when several had to agree."""
    if request.policy.quorum <= 1 or not request.votes:
        return []
    by_votes = request.status is Status.ANSWERED and not request.decided_by_timeout
    decided = request.answers if by_votes else None
    rows = tally_lines(request, skip=decided)
    if not rows:
        return []
    return ["-# Other votes:" if decided is not None else "-# Votes:", *rows]


def _name(person: Person | None) -> str:
    if person is None:
        return "someone"
    return f"**{shorten(person.name or person.id, MAX_NAME)}**"


def _timestamp(when: datetime | None) -> str:
    return "" if when is None else timestamp(when, "f")


# --- fitting ------------------------------------------------------------------------------


def _fitted(fields: Fields, texts: Callable[[Fields], list[str]]) -> list[str]:
    """`texts(fields)`, with the fields shortened (longest first) to keep within MAX_TEXT."""
    full = texts(fields)
    overhead = sum(len(t) for t in full) - sum(len(v) for v in fields.values())
    keys = list(fields)
    shortened = fit([fields[k] for k in keys], MAX_TEXT - overhead)
    return texts(dict(zip(keys, shortened, strict=True)))
