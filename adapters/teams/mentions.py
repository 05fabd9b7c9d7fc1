"""The reminder card: the one place a Teams card mentions people. Only the answerers who are
Teams people (`teams:<Entra user id>`) are mentioned, each by an `<at>` tag in a TextBlock with
its entity, named as Teams names them, as many as the card's size leaves room for and then
"and N more"; everything else on it is plain runs."""

from __future__ import annotations

import re
from collections.abc import Mapping

from askbridge.adapters.teams.fit import fit, fits_with_runs_cut
from askbridge.adapters.teams.members import named, teams_people
from askbridge.adapters.teams.render import VERSION, answerers_text, deadline_lines
from askbridge.adapters.teams.text import Element, clip, plain
from askbridge.core.view import RequestView

MAX_MENTIONS = 20
UNSAFE_IN_TAG = re.compile(r"[<>*_~`\[\]\\#|{}]")
"""What a name may not hold inside `<at>…</at>`, where it would end the tag or restyle it, or
be read as a date or time function (`{{DATE(…)}}`)."""


def tag_text(name: str) -> str:
    return f"<at>{clip(UNSAFE_IN_TAG.sub('', name).strip() or 'someone', 100)}</at>"


def reminder_card(view: RequestView, names: Mapping[str, str | None]) -> Element:
    """The nudge, mentioning each Teams answerer named in `names` (Entra id -> name, None: not
    in the conversation; `members`) as far as Teams' size limit lets it: as many whole mentions
    as fit, in order, with the sentence cut no shorter than MIN_RUN, then "and N more"; a
    mention is never cut (a cut tag pings nobody)."""
    entities = [
        {"type": "mention", "text": tag_text(name), "mentioned": {"id": user, "name": name}}
        for user in teams_people(view.answerers)[:MAX_MENTIONS]
        if (name := names.get(user))
    ]
    # What the deadline does goes beneath, as the card words it: its time in each reader's zone.
    line = view.deadline_line
    nudge = view.reminder if line is None else view.reminder.removesuffix(f" {line}.")
    said = [
        plain(nudge.format(answerers=answerers_text(named(view.answerers, names)))),
        *deadline_lines(view),
    ]
    for count in range(len(entities), 0, -1):
        card = _card(entities[:count], len(entities) - count, said)
        if fits_with_runs_cut(card):
            return card
    return fit(_card([], 0, said))


def _card(entities: list[Element], more: int, said: list[Element]) -> Element:
    """The reminder mentioning `entities`, then saying how many `more` are not mentioned."""
    body: list[Element] = []
    if entities:
        tags = " ".join(str(entity["text"]) for entity in entities)
        rest = f" and {more} more" if more else ""
        body.append({"type": "TextBlock", "text": f"⏰ {tags}{rest}", "wrap": True})
    body += said
    card: Element = {"type": "AdaptiveCard", "version": VERSION, "body": body}
    if entities:
        card["msteams"] = {"entities": entities}
    return card
