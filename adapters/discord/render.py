"""A request as a Discord message: one Components V2 container, rendered from its `RequestView`.

While waiting: the context, the policy, per question its text and controls, then Submit, the
form's button and Cancel (a typed form: its message, its fields, then "Fill in…", Decline and
Cancel); once ended, no controls, and the answers (or the values filled in). 4 questions x 4
options come to 32 of Discord's 40 components. Every text that can be long (the context, the
tool call, questions, labels, descriptions, who may answer, the tally, answers and notes) has a
share of `MAX_TEXT`, one share cut for all until the message fits; the tool call, the labels
and the answers, what an approver judges by, get a larger one. Every text an agent or a person
wrote goes through `text` (or a plain-text field).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import discord
from discord import ui

from askbridge.adapters.discord.ids import ActionButton, ChoiceSelect, CustomId
from askbridge.adapters.discord.lines import (
    MAX_WHO,
    answerers_text,
    deadline_slots,
    names,
    tally_lines,
    timestamp,
)
from askbridge.adapters.discord.text import clip, escape, line, link, prose, shorten
from askbridge.adapters.discord.tool_call import tool_text
from askbridge.core.changes import CHANGE_ACTION, Changeable, offered
from askbridge.core.forms import Form, FormField
from askbridge.core.models import UserQuestion
from askbridge.core.view import CANCEL_HINT, WHO_MAY_ANSWER, RequestView, State

MAX_TEXT = 4000
"""All TextDisplays of a Components V2 message together."""
MAX_BUTTON_LABEL = 80
MAX_OPTION_TEXT = 100
"""A select option's label, and its description."""
MAX_PLACEHOLDER = 150
MAX_ANSWER = 300
MAX_NOTE = 1000
"""The notes given with one answer, before the whole message is fitted within MAX_TEXT."""
ENDING_LOOK = {
    State.ANSWERED: (discord.Colour.green(), "✅"),
    State.DECIDED_BY_TIMEOUT: (discord.Colour.green(), "⏱️"),
    State.CANCELLED: (discord.Colour.red(), "✖️"),
    State.EXPIRED: (discord.Colour.light_grey(), "⌛"),
    State.WITHDRAWN: (discord.Colour.light_grey(), "↩️"),
    State.DECLINED: (discord.Colour.orange(), "🙅"),
}
"""Each ending's accent colour and mark."""

Item = ui.Item[Any]
Style = discord.ButtonStyle
Fields = dict[tuple[object, ...], str]
"""The texts that may be shortened, by where they go, as shortened to fit."""
WHOLE = 1 << 30
"""A share that leaves every text whole."""
JUDGED_BY = 4
"""How much larger the share of an option's label, an answer and the tool call is: what an
approver must see to judge is cut last."""


@dataclass(frozen=True)
class Part:
    """A text of the message that may be shortened: `cut(share * weight)` is it within that
    many characters (whole when they are enough)."""

    cut: Callable[[int], str]
    weight: int = 1


Parts = dict[tuple[object, ...], Part]


def _shortened(text: str, most: int = WHOLE, weight: int = 1) -> Part:
    """Markdown cut as `shorten` cuts it, never longer than `most`."""
    return Part(lambda share: shorten(text, min(share, most)), weight)


def render(view: RequestView) -> ui.LayoutView:
    """The whole message for the request's current state."""
    colour, items = (discord.Colour.blurple(), _waiting(view)) if view.waiting else _ended(view)
    layout = ui.LayoutView(timeout=None)
    layout.add_item(ui.Container(*items, accent_colour=colour))
    return layout


# --- waiting ------------------------------------------------------------------------------


def _waiting(view: RequestView) -> list[Item]:
    if view.form is not None:
        return _form_waiting(view, view.form)
    parts = _heading_parts(view) | _policy_parts(view)
    for q, question in enumerate(view.questions):
        parts["question", q] = _shortened(prose(question.question.strip()))
        if not question.multi_select:
            for o, option in enumerate(question.options):
                label = line(option.label)
                parts["label", q, o] = _shortened(label, MAX_BUTTON_LABEL, JUDGED_BY)
                description = line(option.description)
                parts["description", q, o] = _shortened(description, MAX_OPTION_TEXT)
    texts = _fitted(parts, lambda f: _waiting_texts(view, f))

    items: list[Item] = []
    if texts[0]:
        items.append(ui.TextDisplay(texts[0]))
    for q, question in enumerate(view.questions):
        items.append(ui.TextDisplay(texts[q + 1]))
        items.append(_controls(view, q, question))
    items.append(ui.Separator())
    items.append(ui.TextDisplay(texts[-1]))
    request_id = view.request_id
    buttons = [ActionButton.make(CustomId.cancel(request_id), "Cancel", Style.danger)]
    if change_fits(view) is not None:
        change = ActionButton.make(CustomId.change(request_id), CHANGE_ACTION, Style.secondary)
        buttons.insert(0, change)
    if (words := words_label(view)) is not None:
        buttons.insert(0, ActionButton.make(CustomId.words(request_id), words, Style.primary))
    if not view.one_click:
        submit = ActionButton.make(CustomId.submit(request_id), "Submit", Style.success)
        buttons.insert(0, submit)
    items.append(ui.ActionRow(*buttons))
    return items


MAX_TEXT_INPUT = 4000
"""The most a modal's text input takes (its max_length, and its value)."""


def change_fits(view: RequestView) -> Changeable | None:
    """What of the tool call may be changed (Edit and allow), when its value fits a modal's
    text input."""
    return offered(view.changeable, lambda field: 0 < len(field.text) <= MAX_TEXT_INPUT)


def words_label(view: RequestView) -> str | None:
    """The label of the button that opens the form for an answer in one's own words (and a
    note), when the request takes them. Its form submits, hence the second name."""
    policy = view.request.policy
    if policy.allow_other:
        return "Answer in my words…"
    if policy.allow_notes:
        return "Submit with a note…"
    return None


def _waiting_texts(view: RequestView, fields: Fields) -> list[str]:
    """[context and the tool call, one text per question, the policy and hint]; the first may
    be empty."""
    texts = [_with_tool(fields)]
    for q, question in enumerate(view.questions):
        lines = [f"**{line(question.header)}** · {fields['question', q]}".rstrip()]
        if not question.multi_select:
            for o in range(len(question.options)):
                label = f"- **{fields['label', q, o]}**"
                description = fields["description", q, o]
                lines.append(f"{label} — {description}" if description else label)
        texts.append("\n".join(lines))
    texts.append("\n".join(t for t in (fields["policy",], _hint(view)) if t))
    return texts


def _heading_parts(view: RequestView) -> Parts:
    """The context, and the tool call the request asks to approve, when it has one."""
    parts: Parts = {("context",): _shortened(prose(view.context))}
    tool = view.tool
    if tool is not None:
        parts["tool",] = Part(lambda share: tool_text(tool, share), JUDGED_BY)
    return parts


def _policy_parts(view: RequestView) -> Parts:
    return {("policy",): Part(lambda share: "\n".join(policy_lines(view, share)))}


def _with_tool(fields: Fields) -> str:
    """The context, then the tool call, when the request has one."""
    return "\n\n".join(t for t in (fields["context",], fields.get(("tool",), "")) if t)


def _hint(view: RequestView) -> str:
    return f"-# {view.how_to_answer} {CANCEL_HINT}"


def _controls(view: RequestView, q: int, question: UserQuestion) -> Item:
    request_id = view.request_id
    if question.multi_select:
        options = [
            discord.SelectOption(
                label=clip(option.label, MAX_OPTION_TEXT),
                value=str(o),
                description=clip(option.description.strip(), MAX_OPTION_TEXT) or None,
            )
            for o, option in enumerate(question.options)
        ]
        placeholder = clip(f"{question.header}: choose one or more", MAX_PLACEHOLDER)
        return ui.ActionRow(ChoiceSelect.make(CustomId.choose(request_id, q), placeholder, options))
    style = Style.primary if view.one_click else Style.secondary
    return ui.ActionRow(
        *(
            ActionButton.make(
                CustomId.pick(request_id, q, o), clip(option.label, MAX_BUTTON_LABEL), style
            )
            for o, option in enumerate(question.options)
        )
    )


def policy_lines(view: RequestView, share: int = WHOLE) -> list[str]:
    """Who may answer, how many must agree and the tally, and what the deadline does; who may
    answer, each answer and each list of voters cut to `share`."""
    lines: list[str] = []
    who = answerers_text(view.answerers, min(share, MAX_WHO))
    if view.answerers:
        lines.append(WHO_MAY_ANSWER.format(answerers=who))
    if view.escalation_line is not None:
        lines.append(view.escalation_line.format(answerers=who))
    if view.needs_votes:
        lines.append(f"**{view.votes_needed}**")
        lines.extend(tally_lines(view, view.tally, share))
    if view.deadline_line is not None:
        lines.append(f"⏳ {view.deadline_line.format(**deadline_slots(view, share))}")
    return lines


# --- ended --------------------------------------------------------------------------------


def _ended(view: RequestView) -> tuple[discord.Colour, list[Item]]:
    colour, end = ending(view)
    if view.form is not None:
        return colour, _form_ended(view, view.form, end)
    parts = _heading_parts(view) | _other_votes_parts(view)
    notes = view.notes
    for q, question in enumerate(view.questions):
        parts["question", q] = _shortened(prose(question.question.strip()))
        if question.header in view.answers:
            answer = line(view.answers[question.header])
            parts["answer", q] = _shortened(answer, MAX_ANSWER, JUDGED_BY)
        if question.header in notes:
            parts["note", q] = _shortened(escape(notes[question.header].strip()), MAX_NOTE)
    texts = _fitted(parts, lambda f: _ended_texts(view, f, end))
    return colour, [ui.TextDisplay(text) for text in texts if text]


def _ended_texts(view: RequestView, fields: Fields, end: str) -> list[str]:
    """[context and the tool call, one text per question, how it ended]; the first may be
    empty."""
    texts = [_with_tool(fields)]
    for q, question in enumerate(view.questions):
        text = f"**{line(question.header)}** · {fields['question', q]}".rstrip()
        if ("answer", q) in fields:
            text += f"\n→ **{fields['answer', q]}**"
        if ("note", q) in fields:
            text += f"\n📝 {fields['note', q]}"
        texts.append(text)
    texts.append("\n".join(t for t in (end, fields["other votes",]) if t))
    return texts


def ending(view: RequestView) -> tuple[discord.Colour, str]:
    """Who ended the request, how, and when (in each reader's own time zone); and its colour."""
    colour, emoji = ENDING_LOOK.get(view.state, (discord.Colour.light_grey(), ""))
    heading = view.heading.format(deciders=names(view.deciders, True))
    when = "" if view.ended_at is None else f" · {timestamp(view.ended_at, 'f')}"
    return colour, f"{emoji} {heading}{when}".lstrip()


def _other_votes_parts(view: RequestView) -> Parts:
    return {("other votes",): Part(lambda share: "\n".join(_other_votes(view, share)))}


def _other_votes(view: RequestView, share: int) -> list[str]:
    """The votes that did not decide the request, when several had to agree; each answer and
    each list of voters cut to `share`."""
    rows = view.other_votes if view.needs_votes else ()
    if not rows:
        return []
    decided = any(row.decided for row in view.tally)
    return ["-# Other votes:" if decided else "-# Votes:", *tally_lines(view, rows, share)]


# --- typed forms --------------------------------------------------------------------------

FILL_IN = "Fill in…"
DONE = "Done"
"""The button of a form that is a link to open (a URL-mode elicitation): the person did it."""
DECLINE = "Decline"


def field_title(field: FormField) -> str:
    """A field's title on one line, as plain text; its name, if the title is only spaces (a
    label or a heading must show something)."""
    return " ".join(field.title.split()) or " ".join(field.name.split()) or "Answer"


def _form_waiting(view: RequestView, form: Form) -> list[Item]:
    parts = _heading_parts(view) | _policy_parts(view)
    parts["message",] = _shortened(prose(form.message))
    for index, field in enumerate(form.fields):
        parts["description", index] = _shortened(line(field.description))
    texts = _fitted(parts, lambda f: _form_waiting_texts(view, form, f))
    items: list[Item] = [ui.TextDisplay(text) for text in texts[:-1] if text]
    items.append(ui.Separator())
    items.append(ui.TextDisplay(texts[-1]))
    request_id = view.request_id
    items.append(
        ui.ActionRow(
            ActionButton.make(
                CustomId.fill(request_id), DONE if form.url else FILL_IN, Style.primary
            ),
            ActionButton.make(CustomId.decline(request_id), DECLINE, Style.secondary),
            ActionButton.make(CustomId.cancel(request_id), "Cancel", Style.danger),
        )
    )
    return items


def _form_waiting_texts(view: RequestView, form: Form, fields: Fields) -> list[str]:
    """[context and the tool call, the message (and its link), the fields, the policy and
    hint]; any but the last may be empty."""
    message = fields["message",]
    if form.url is not None:
        # A link the person is asked to open: live, and opening the page the agent gave.
        message += f"\n🔗 {link(form.url)}"
    rows = []
    for index, field in enumerate(form.fields):
        row = f"- **{shorten(escape(field_title(field)), MAX_BUTTON_LABEL)}**"
        row += " (required)" if field.required else ""
        description = fields["description", index]
        rows.append(f"{row} — {description}" if description else row)
    return [
        _with_tool(fields),
        message,
        "\n".join(rows),
        "\n".join(t for t in (fields["policy",], _hint(view)) if t),
    ]


def _form_ended(view: RequestView, form: Form, end: str) -> list[Item]:
    parts = _heading_parts(view) | _other_votes_parts(view)
    parts["message",] = _shortened(prose(form.message))
    for index, (_, value) in enumerate(view.filled_in()):
        parts["value", index] = _shortened(line(value))
    texts = _fitted(parts, lambda f: _form_ended_texts(view, f, end))
    return [ui.TextDisplay(text) for text in texts if text]


def _form_ended_texts(view: RequestView, fields: Fields, end: str) -> list[str]:
    """[context and the tool call, the message, the values given, how it ended]."""
    rows = [
        f"**{shorten(escape(field_title(field)), MAX_BUTTON_LABEL)}**: {fields['value', index]}"
        for index, (field, _) in enumerate(view.filled_in())
    ]
    return [
        _with_tool(fields),
        fields["message",],
        "\n".join(rows),
        "\n".join(t for t in (end, fields["other votes",]) if t),
    ]


# --- fitting ------------------------------------------------------------------------------


def _fitted(parts: Parts, texts: Callable[[Fields], list[str]]) -> list[str]:
    """`texts` of the parts, whole if they fit in MAX_TEXT together, else each cut to the
    largest share (times its weight) with which they fit: short texts stay whole, and the
    longest are cut first."""

    def cut(share: int) -> list[str]:
        return texts({key: part.cut(share * part.weight) for key, part in parts.items()})

    whole = cut(WHOLE)
    # Each part is within the whole message, so with a share that long every part is whole.
    low, high = 0, _length(whole)
    if high <= MAX_TEXT:
        return whole
    while low < high:
        share = (low + high + 1) // 2
        if _length(cut(share)) <= MAX_TEXT:
            low = share
        else:
            high = share - 1
    return cut(low)


def _length(texts: list[str]) -> int:
    return sum(len(text) for text in texts)
