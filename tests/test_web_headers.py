"""Every response of the web page carries its security headers, a refusal too: the sign-in
page, the script's long-poll, the files it loads. An address may hold a link's token
(`core.public_links`), which no cache may keep and no Referer may carry to another site."""

from __future__ import annotations

import base64

import aiohttp
from aiohttp import web

from askbridge.adapters.web import add_web_routes
from askbridge.adapters.web.render import HEADERS
from tests.conftest import StartService
from tests.test_public_links import AUTH, PUBLIC, TOKEN, approval, ask

SIGNED_IN = {"Authorization": "Basic " + base64.b64encode(f"me:{TOKEN}".encode()).decode()}
ROUTES = {
    ("GET", "/"): "/",
    ("GET", "/q/{request_id}"): "/q/ask_a",
    ("POST", "/q/{request_id}"): "/q/ask_a",
    ("GET", "/web/changes"): "/web/changes?request=ask_none",
    ("GET", "/web/live.js"): "/web/live.js",
    ("GET", "/web/style.css"): "/web/style.css",
}
"""Each of the web page's routes, and an address of it that answers at once."""


async def test_every_web_response_carries_the_pages_security_headers(
    start_service: StartService, http: aiohttp.ClientSession
) -> None:
    service = await start_service(
        host="0.0.0.0", api_token=TOKEN, web_ui="on", public_url=PUBLIC + "/"
    )
    await ask(http, service.url, approval("ask_a"))
    app = web.Application()
    add_web_routes(app, service.broker, key=b"k" * 32)
    served = {
        (route.method, route.resource.canonical)
        for route in app.router.routes()
        if route.resource is not None and route.method != "HEAD"
    }
    assert served == set(ROUTES), "a new route is checked here too"
    for (method, _), path in ROUTES.items():
        for headers in (SIGNED_IN, {}, AUTH):
            url = f"{service.url}{path}"
            async with http.request(method, url, headers=headers, allow_redirects=False) as reply:
                assert reply.status < 500, (method, path)
                for name, value in HEADERS.items():
                    assert reply.headers.get(name) == value, (method, path, reply.status, name)
