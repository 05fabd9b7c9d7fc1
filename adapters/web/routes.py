"""Routes of the answer page: `/` lists questions, `/q/{id}` shows one and takes its answer."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass

from aiohttp import web
from multidict import MultiDictProxy

from adapters.web import pages
from core.answers import unanswered
from core.broker import Broker
from core.errors import AlreadyEnded, MissingAnswers, NotEligible, NotFound
from core.models import Person, Request, Selections, Status

NAME_COOKIE = "askbridge_name"
MAX_NAME_CHARS = 80
CHANGES_WAIT_S = 25.0


@dataclass(frozen=True)
class WebPage:
    broker: Broker
    # Each form carries an HMAC of its request id, so another site cannot post answers.
    secret: bytes
    # Set when the page is served beyond loopback: HTTP Basic auth with the API token.
    password: str | None = None

    def form_token(self, request_id: str) -> str:
        return hmac.new(self.secret, request_id.encode(), hashlib.sha256).hexdigest()


WEB: web.AppKey[WebPage] = web.AppKey("web_page", WebPage)


def add_web_routes(app: web.Application, broker: Broker, *, password: str | None = None) -> None:
    app[WEB] = WebPage(broker, secrets.token_bytes(32), password)
    app.router.add_get("/", index)
    app.router.add_get("/q/{request_id}", show)
    app.router.add_post("/q/{request_id}", answer)
    app.router.add_get("/web/changes", changes)


def _page(request: web.Request) -> WebPage:
    web_page = request.app[WEB]
    if web_page.password is not None and not _authorized(request, web_page.password):
        raise web.HTTPUnauthorized(
            headers={"WWW-Authenticate": 'Basic realm="askbridge", charset="UTF-8"'},
            text="Sign in with any user name and the API token (ASKBRIDGE_API_TOKEN).",
        )
    return web_page


def _authorized(request: web.Request, password: str) -> bool:
    scheme, _, encoded = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "basic":
        return False
    try:
        _, _, given = base64.b64decode(encoded).decode().partition(":")
    except ValueError:
        return False
    return hmac.compare_digest(given.encode(), password.encode())


def _html(text: str, status: int = 200) -> web.Response:
    response = web.Response(text=text, status=status, content_type="text/html")
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Content-Security-Policy"] = (
        "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
        "connect-src 'self'; form-action 'self'; frame-ancestors 'none'"
    )
    return response


async def index(request: web.Request) -> web.Response:
    web_page = _page(request)
    broker = web_page.broker
    waiting = await broker.list_requests(Status.WAITING)
    recent = [r for r in await broker.list_requests(limit=20) if r.status.is_terminal]
    return _html(pages.index(reversed(waiting), recent[:10], broker.hub.version))


async def show(request: web.Request) -> web.Response:
    web_page = _page(request)
    broker = web_page.broker
    request_id = request.match_info["request_id"]
    try:
        found = await broker.get(request_id)
    except NotFound:
        return _html(pages.not_found(request_id, broker.hub.version), status=404)
    if found.status.is_terminal:
        return _html(pages.outcome(found, broker.hub.version))
    return _html(
        pages.question_form(
            found,
            token=web_page.form_token(request_id),
            version=broker.hub.version,
            name=request.cookies.get(NAME_COOKIE, ""),
        )
    )


async def answer(request: web.Request) -> web.Response:
    web_page = _page(request)
    broker = web_page.broker
    request_id = request.match_info["request_id"]
    form = await request.post()
    given = form.get("csrf")
    if not isinstance(given, str) or not hmac.compare_digest(
        given, web_page.form_token(request_id)
    ):
        return _html(
            pages.page(
                "Out of date",
                "<h1>This form is out of date</h1><p>askbridge restarted or the form came from "
                f"elsewhere. <a href='/q/{request_id}'>Open the question again</a>.</p>",
                version=broker.hub.version,
            ),
            status=403,
        )
    name = str(form.get("name") or "").strip()[:MAX_NAME_CHARS]
    person = Person(platform="web", id=name or "local", name=name or "web user")
    try:
        found = await broker.get(request_id)
    except NotFound:
        return _html(pages.not_found(request_id, broker.hub.version), status=404)
    chosen = _selections(form, len(found.questions))
    try:
        if form.get("action") == "cancel":
            await broker.cancel(request_id, person)
        else:
            missing = unanswered(found.questions, chosen)
            if missing:
                raise MissingAnswers(missing)
            voted = await broker.submit(request_id, person, chosen)
            if not voted.status.is_terminal:
                return _html(
                    pages.outcome(
                        voted, broker.hub.version, note=_vote_note(voted, person), flash=True
                    )
                )
    except NotEligible as error:
        return _html(pages.outcome(found, broker.hub.version, note=str(error)), status=403)
    except MissingAnswers as error:
        body = pages.question_form(
            found,
            token=web_page.form_token(request_id),
            version=broker.hub.version,
            chosen=chosen,
            missing=error.headers,
            name=name,
        )
        return _html(body, status=422)
    except AlreadyEnded as error:
        return _html(pages.outcome(error.request, broker.hub.version, note=str(error)), status=409)
    response = web.HTTPSeeOther(f"/q/{request_id}")
    if name:
        response.set_cookie(NAME_COOKIE, name, max_age=365 * 24 * 3600, samesite="Strict")
    raise response


async def changes(request: web.Request) -> web.Response:
    """Long-poll for the page's script: returns once anything changed, or after a while."""
    broker = _page(request).broker
    try:
        since = int(request.query.get("since", "0"))
    except ValueError:
        since = 0
    version = await broker.hub.wait_for_change(since, CHANGES_WAIT_S)
    waiting = [r.request_id for r in await broker.list_requests(Status.WAITING)]
    return web.json_response({"version": version, "waiting": waiting})


def _selections(
    form: MultiDictProxy[str | bytes | bytearray | web.FileField], count: int
) -> Selections:
    chosen: Selections = {}
    for index in range(count):
        values = [v for v in form.getall(f"q{index}", []) if isinstance(v, str) and v.isdigit()]
        if values:
            chosen[index] = tuple(sorted({int(v) for v in values}))
    return chosen


def _vote_note(request: Request, person: Person) -> str:
    mine = next((v.answers for v in request.votes if v.person.key == person.key), {})
    agreeing = sum(1 for v in request.votes if v.answers == mine)
    choice = "; ".join(f"{header}: {answer}" for header, answer in mine.items())
    return (
        f"Your vote is counted: {agreeing} of {request.policy.quorum} so far for {choice}. "
        "You can change it until the question is decided."
    )
