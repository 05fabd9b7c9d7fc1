"""Routes of the answer page: `/` lists questions, `/q/{id}` shows one and takes its answer."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib import resources

from aiohttp import web

from askbridge.adapters.web import clicks, notes, render
from askbridge.core.api.reading import body_deadline
from askbridge.core.broker import REQUEST_ID_PATTERN, Broker
from askbridge.core.errors import NotFound
from askbridge.core.intents import Cancel
from askbridge.core.models import Request, Status
from askbridge.core.public_links import TOKEN_PARAM, opens
from askbridge.core.view import RequestView

CHANGES_WAIT_S = 25.0
RECENTLY_ENDED = 10
WAITING_PER_PAGE = 50
KEY_NAME = "web-form-key"
"""Under which name the store keeps the random key, when ASKBRIDGE_WEB_SECRET is not set."""


async def form_key(broker: Broker, configured: str | None) -> bytes:
    """The key that signs the page's forms: from ASKBRIDGE_WEB_SECRET, else one random key kept
    in the store, so a form outlives restarts and works on every replica."""
    if configured:
        return hmac.new(configured.encode(), b"askbridge web form key v1", hashlib.sha256).digest()
    return await broker.secret(KEY_NAME)


@dataclass(frozen=True)
class WebPage:
    broker: Broker
    # Each form carries an HMAC of its request id, so another site cannot post answers.
    key: bytes
    # Set when the page is served beyond loopback: HTTP Basic auth with the API token.
    password: str | None = None

    def form_token(self, request_id: str) -> str:
        signed = request_id.encode("utf-8", "replace")
        return hmac.new(self.key, signed, hashlib.sha256).hexdigest()

    def opens(self, request_id: str, given: object) -> bool:
        """`given` is the token of `request_id`'s page (a link in a chat message)."""
        return opens(self.key, request_id, given)

    def link_token(self, request: web.Request, request_id: str) -> str | None:
        """The token the page was opened with, when it is `request_id`'s, so that its form
        and the pages that follow keep it."""
        given = request.query.get(TOKEN_PARAM)
        return given if self.opens(request_id, given) else None

    def signed(self, request_id: str, given: object) -> bool:
        """The form was made here for this request (`given` is its csrf field)."""
        if not isinstance(given, str):
            return False
        expected = self.form_token(request_id).encode()
        return hmac.compare_digest(given.encode("utf-8", "replace"), expected)


WEB: web.AppKey[WebPage] = web.AppKey("web_page", WebPage)


def add_web_routes(
    app: web.Application, broker: Broker, *, key: bytes, password: str | None = None
) -> None:
    """Serve the page; `key` (see `form_key`) signs its forms."""
    app[WEB] = WebPage(broker, key, password)
    app.router.add_get("/", _headed(index))
    app.router.add_get("/q/{request_id}", _headed(show))
    app.router.add_post("/q/{request_id}", _headed(answer))
    app.router.add_get("/web/changes", _headed(changes))
    # Served from files, never inline, so the page's Content-Security-Policy allows no inline
    # style or script: text that slipped into the HTML could not run.
    app.router.add_get("/web/live.js", _headed(_asset("live.js", "text/javascript")))
    app.router.add_get("/web/style.css", _headed(_asset("style.css", "text/css")))


Handler = Callable[[web.Request], Awaitable[web.Response]]


def _headed(handler: Handler) -> Handler:
    """`handler` with the page's security headers (`render.HEADERS`) on all it answers. A
    refusal (the sign-in page, a body too large) is answered here as it was raised, text and
    headers, for the agent API's error body would carry none of them."""

    async def headed(request: web.Request) -> web.Response:
        try:
            reply = await handler(request)
        except web.HTTPException as refused:
            if refused.status < 400 or refused.content_type == "application/json":
                # The agent API's errors pass these on as they are, headers and all (a 408
                # for a trickled body also closes the connection).
                refused.headers.update(render.HEADERS)
                raise
            kept = {k: v for k, v in refused.headers.items() if k.lower() != "content-type"}
            reply = web.Response(status=refused.status, text=refused.text, headers=kept)
        reply.headers.update(render.HEADERS)
        return reply

    return headed


def _page(request: web.Request, request_id: str | None = None) -> WebPage:
    """The page, once the person may see it: signed in, or, for `request_id`'s page only,
    holding its link's token (`core.public_links`)."""
    web_page = request.app[WEB]
    if web_page.password is not None and not _authorized(request, web_page.password):
        if request_id is not None and web_page.opens(request_id, request.query.get(TOKEN_PARAM)):
            return web_page
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


async def index(request: web.Request) -> web.Response:
    """The newest waiting questions, newest first, and how many more wait; `?before=<id>`: the
    page of those after question <id>."""
    broker = _page(request).broker
    before = request.query.get("before") or None
    page: list[Request] = []
    if before is None or _well_formed(before):
        page = await broker.list_requests(Status.WAITING, WAITING_PER_PAGE, older_than=before)
    waiting = [RequestView.of(r) for r in page]
    more = 0
    if len(page) == WAITING_PER_PAGE:
        more = await broker.count_requests(Status.WAITING, older_than=page[-1].request_id)
    ended: list[RequestView] = []
    if before is None:
        recent = await broker.list_requests(limit=2 * RECENTLY_ENDED)
        ended = [RequestView.of(r) for r in recent if r.status.is_terminal][:RECENTLY_ENDED]
    html = render.index(waiting, ended, broker.version, more=more, paged=before is not None)
    return render.response(html)


async def show(request: web.Request) -> web.Response:
    request_id = request.match_info["request_id"]
    web_page = _page(request, request_id)
    broker = web_page.broker
    try:
        view = RequestView.of(await broker.get(request_id))
    except NotFound:
        return render.response(render.not_found(request_id, broker.version), 404)
    if not view.waiting:
        return render.response(render.outcome(view, version=broker.version))
    token = web_page.form_token(request_id)
    name = request.cookies.get(clicks.NAME_COOKIE, "")
    click_id = clicks.new_click_id()
    page = render.form(
        view,
        token=token,
        version=broker.version,
        click_id=click_id,
        name=name,
        link_token=web_page.link_token(request, request_id),
    )
    return render.response(page)


async def answer(request: web.Request) -> web.Response:
    request_id = request.match_info["request_id"]
    web_page = _page(request, request_id)
    broker = web_page.broker
    try:
        async with body_deadline(request):
            form = await request.post()
    except ValueError:  # not UTF-8, a multipart body without its boundary…
        return render.response(render.unreadable(broker.version), 400)
    if not web_page.signed(request_id, form.get("csrf")):
        return render.response(render.out_of_date(request_id, broker.version), 403)
    click = clicks.parse(form)
    link_token = web_page.link_token(request, request_id)
    if isinstance(click.intent, Cancel) and not clicks.confirmed(form):
        # Without a script no dialog asked: this page does, with the same one-use id.
        page = render.confirm_cancel(
            request_id,
            token=web_page.form_token(request_id),
            version=broker.version,
            click_id=click.click_id or "",
            name=click.name,
            link_token=link_token,
        )
        return render.response(page)
    outcome = await broker.act(request_id, click.person, click.intent, click_id=click.click_id)
    token = web_page.form_token(request_id)
    return notes.respond(
        outcome,
        click,
        request_id=request_id,
        token=token,
        version=broker.version,
        link_token=link_token,
    )


async def changes(request: web.Request) -> web.Response:
    """Long-poll for the page's script, returning after a while if nothing happens.

    `?request=<id>`, for a question's page: returns once that request is no longer waiting,
    with its status; other requests' changes, and votes that leave it waiting, do not wake it.
    `?since=<version>`, for the list: returns once any request changed, with the new version.
    """
    request_id = request.query.get("request")
    broker = _page(request, request_id).broker
    if request_id is not None:
        return await _follow(broker, request_id)
    try:
        since = int(request.query.get("since", "0")[:20])
    except ValueError:
        since = 0
    return web.json_response({"version": await broker.wait_for_change(since, CHANGES_WAIT_S)})


async def _follow(broker: Broker, request_id: str) -> web.Response:
    found = None
    if _well_formed(request_id):
        with contextlib.suppress(NotFound):
            found = await broker.wait(request_id, CHANGES_WAIT_S)
    if found is None:
        return web.json_response({"request_id": request_id, "status": None}, status=404)
    return web.json_response({"request_id": request_id, "status": found.status.value})


def _well_formed(request_id: str) -> bool:
    """Could be a request's id: other values, which no request has, need not reach the store."""
    return REQUEST_ID_PATTERN.fullmatch(request_id) is not None


def _asset(name: str, content_type: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    body = resources.files("askbridge.adapters.web").joinpath("static", name).read_text()

    async def serve(request: web.Request) -> web.Response:
        return web.Response(text=body, content_type=content_type)

    return serve
