"""HTML for the answer page: plain forms that work without a script; a small script only
keeps the list fresh."""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

from core.api.status import ERRORS
from core.models import Request, Selections, Status

STYLE = """
:root { color-scheme: light dark; --accent: #2f6feb; --muted: #6b7280; --bad: #c2410c; }
body { font: 16px/1.5 system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.4rem; } a { color: var(--accent); }
.context { color: var(--muted); margin: 0 0 1rem; }
fieldset { border: 1px solid #8884; border-radius: .5rem; margin: 0 0 1rem; padding: .75rem 1rem; }
fieldset.missing { border-color: var(--bad); }
legend { font-weight: 600; padding: 0 .25rem; }
.tag { display: inline-block; font-size: .75rem; font-weight: 700; text-transform: uppercase;
       letter-spacing: .04em; background: #8882; border-radius: .25rem; padding: 0 .4rem; }
label.option { display: block; padding: .35rem .25rem; border-radius: .35rem; cursor: pointer; }
label.option:hover { background: #8881; }
.desc { display: block; color: var(--muted); font-size: .9rem; margin-left: 1.6rem; }
.error { color: var(--bad); font-weight: 600; }
.note { color: var(--accent); font-weight: 600; }
.question { white-space: pre-wrap; }
.hint { color: var(--muted); font-size: .85rem; }
button { font: inherit; padding: .45rem 1.1rem; border-radius: .4rem; border: 1px solid #8886;
         cursor: pointer; margin-right: .5rem; }
button.primary { background: var(--accent); color: white; border-color: var(--accent); }
button.danger { color: var(--bad); }
ul.requests { list-style: none; padding: 0; }
ul.requests li { border: 1px solid #8884; border-radius: .5rem; padding: .6rem 1rem;
                 margin: .5rem 0; }
table { border-collapse: collapse; } td, th { padding: .25rem .75rem .25rem 0; text-align: left; }
"""

LIVE_SCRIPT = """
(function () {
  const root = document.body;
  let version = Number(root.dataset.version);
  const watching = root.dataset.request;
  let leaving = false;
  // Once the person submits, this page is on its way out: never navigate over that.
  document.addEventListener('submit', () => { leaving = true; });
  async function follow() {
    while (!leaving) {
      try {
        const reply = await fetch('/web/changes?since=' + version, {cache: 'no-store'});
        const body = await reply.json();
        if (leaving || body.version === version) continue;
        version = body.version;
        if (!watching) {
          const page = await fetch(location.pathname, {cache: 'no-store'});
          const html = new DOMParser().parseFromString(await page.text(), 'text/html');
          document.getElementById('live').replaceWith(html.getElementById('live'));
        } else if (!(body.waiting || []).includes(watching)) {
          // A GET of the question, not reload(): this page may be the answer to a POST.
          location.replace(location.pathname);
          return;
        }
      } catch (error) {
        await new Promise(resume => setTimeout(resume, 3000));
      }
    }
  }
  follow();
})();
"""


def page(title: str, body: str, *, version: int, watching: str = "") -> str:
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{escape(title)} · askbridge</title><style>{STYLE}</style></head>"
        f"<body data-version='{version}' data-request='{escape(watching)}'>{body}"
        f"<script>{LIVE_SCRIPT}</script></body></html>"
    )


def index(waiting: Iterable[Request], ended: Iterable[Request], version: int) -> str:
    waiting_items = "".join(_list_item(r) for r in waiting)
    ended_items = "".join(_list_item(r) for r in ended)
    body = (
        "<h1>Questions from your agents</h1><div id='live'>"
        + (
            f"<ul class='requests' id='waiting'>{waiting_items}</ul>"
            if waiting_items
            else "<p id='waiting' class='hint'>No question is waiting. New ones appear here.</p>"
        )
        + (f"<h2>Recently ended</h2><ul class='requests'>{ended_items}</ul>" if ended_items else "")
        + "</div>"
    )
    return page("Questions", body, version=version)


def _list_item(request: Request) -> str:
    headers = " ".join(f"<span class='tag'>{escape(q.header)}</span>" for q in request.questions)
    first = escape(request.questions[0].question)
    state = "" if request.status is Status.WAITING else f" — {escape(_outcome_line(request))}"
    return (
        f"<li><a href='/q/{escape(request.request_id)}'>{first}</a> {headers}"
        f"<div class='hint'>{escape(request.context or '')}{state}</div></li>"
    )


def question_form(
    request: Request,
    *,
    token: str,
    version: int,
    chosen: Selections | None = None,
    missing: Iterable[str] = (),
    name: str = "",
) -> str:
    missing = set(missing)
    chosen = chosen or {}
    parts = [f"<h1>{_heading(request)}</h1>"]
    if request.context:
        parts.append(f"<p class='context'>{escape(request.context)}</p>")
    if request.policy.answerers:
        who = ", ".join(request.policy.answerers)
        parts.append(f"<p class='hint'>Who may answer: {escape(who)}</p>")
    if request.policy.quorum > 1:
        parts.append(
            f"<p class='hint'>{request.policy.quorum} people must give the same answers.</p>"
        )
        parts.append(tally(request))
    if missing:
        names = ", ".join(f"“{escape(h)}”" for h in _in_order(request, missing))
        parts.append(f"<p class='error' role='alert'>Please answer {names} before submitting.</p>")
    parts.append(f"<form method='post' action='/q/{escape(request.request_id)}'>")
    parts.append(f"<input type='hidden' name='csrf' value='{escape(token)}'>")
    for index, question in enumerate(request.questions):
        kind = "checkbox" if question.multi_select else "radio"
        css = " class='missing'" if question.header in missing else ""
        hint = "Choose any that apply." if question.multi_select else "Choose one."
        parts.append(
            f"<fieldset{css} data-header='{escape(question.header)}'>"
            f"<legend><span class='tag'>{escape(question.header)}</span></legend>"
            f"<p class='question'>{escape(question.question)} <span class='hint'>{hint}</span></p>"
        )
        for o_index, option in enumerate(question.options):
            checked = " checked" if o_index in chosen.get(index, ()) else ""
            parts.append(
                f"<label class='option'><input type='{kind}' name='q{index}' value='{o_index}'"
                f"{checked}> {escape(option.label)}"
                f"<span class='desc'>{escape(option.description)}</span></label>"
            )
        parts.append("</fieldset>")
    parts.append(
        "<p><label>Your name <input name='name' autocomplete='name' "
        f"value='{escape(name)}' placeholder='shown to the agent'></label></p>"
        "<button class='primary' name='action' value='submit'>Submit</button>"
        "<button class='danger' name='action' value='cancel' onclick=\"return confirm("
        "'Cancel this question? The agent will be interrupted.')\">Cancel</button></form>"
    )
    title = request.questions[0].header
    return page(title, "".join(parts), version=version, watching=request.request_id)


def outcome(request: Request, version: int, note: str = "", *, flash: bool = False) -> str:
    parts = [f"<h1>{_heading(request)}</h1>"]
    if request.context:
        parts.append(f"<p class='context'>{escape(request.context)}</p>")
    if note:
        css = "note" if flash else "error"
        parts.append(f"<p class='{css}' role='alert'>{escape(note)}</p>")
    parts.append(f"<p id='outcome'><strong>{escape(_outcome_line(request))}</strong></p>")
    if request.answers:
        rows = "".join(
            f"<tr><th>{escape(header)}</th><td>{escape(answer)}</td></tr>"
            for header, answer in request.answers.items()
        )
        parts.append(f"<table id='answers'>{rows}</table>")
    parts.append(tally(request))
    parts.append("<p><a href='/'>All questions</a></p>")
    watching = request.request_id if not request.status.is_terminal else ""
    return page(request.questions[0].header, "".join(parts), version=version, watching=watching)


def tally(request: Request) -> str:
    """Votes so far, for requests that need more than one person to agree."""
    if request.policy.quorum <= 1 or not request.votes:
        return ""
    rows = "".join(
        "<li>"
        + escape("; ".join(f"{h}: {a}" for h, a in answers.items()))
        + f" — {len(people)}/{request.policy.quorum} ("
        + escape(", ".join(p.name or p.id for p in people))
        + ")</li>"
        for answers, people in request.tally()
    )
    return f"<h2>Votes</h2><ul id='tally'>{rows}</ul>"


def not_found(request_id: str, version: int) -> str:
    body = (
        f"<h1>No such question</h1><p>There is no question <code>{escape(request_id)}</code>."
        " It may have been withdrawn before it was shown.</p><p><a href='/'>All questions</a></p>"
    )
    return page("Not found", body, version=version)


def _outcome_line(request: Request) -> str:
    who = request.ended_by.name or request.ended_by.id if request.ended_by else "someone"
    when = request.ended_at.strftime("%Y-%m-%d %H:%M UTC") if request.ended_at else ""
    match request.status:
        case Status.ANSWERED if request.decided_by_timeout:
            return f"Decided by timeout at {when}"
        case Status.ANSWERED:
            voters = {v.person.key: v.person for v in request.votes}
            if len(voters) > 1:
                names = ", ".join(p.name or p.id for p in voters.values())
                return f"Answered at {when}; votes from {names}"
            return f"Answered by {who} at {when}"
        case Status.CANCELLED:
            return f"Cancelled by {who} at {when}; the agent was interrupted"
        case Status.WAITING:
            return "Waiting for an answer"
        case _:
            return f"{ERRORS[request.status]} at {when}"


def _in_order(request: Request, headers: set[str]) -> list[str]:
    return [q.header for q in request.questions if q.header in headers]


def _heading(request: Request) -> str:
    count = len(request.questions)
    if count == 1:
        return escape(request.questions[0].question)
    return f"Your agent has {count} questions"
