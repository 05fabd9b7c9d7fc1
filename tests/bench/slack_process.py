"""The Slack emulator in a process of its own, steered over a small control API.

    python -m tests.bench.slack_process      # writes "listening on http://…" to stderr

Each app under test (askbridge in one mode, the floor in one mode) gets its own `SlackEmulator`
in this process, as each Slack app has its own tokens, Socket Mode connection and request
URL; they share this process and its event loop, so both sides of a comparison pay the same
for being Slack. The control API (JSON, on its own port):

    POST /apps/{name}                     start an emulator → its api_url and credentials
    PUT  /apps/{name}/interactions        {"url": …}: where HTTP-mode clicks are POSTed
    GET  /apps/{name}/socket              {"connections": n}: Socket Mode connections so far
    POST /apps/{name}/socket?after=n      wait for connection number n+1
    POST /apps/{name}/click               {"channel", "ts", "label", "via"}: a person clicks
    GET  /apps/{name}/calls               Web API calls so far, by method
    PUT  /collector                       {"on": false}: collect now, then no more collections
                                          until {"on": true} (while clicks are timed)
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections import Counter
from typing import Any

from aiohttp import web

from tests.bench.children import serve_until_told_to_stop
from tests.emulators.slack import SlackEmulator, Via

CHANNEL = "C0BENCH"
CLICKER = "U1"
SOCKET_WAIT_S = 30.0
EMULATORS: web.AppKey[dict[str, SlackEmulator]] = web.AppKey("emulators", dict)


async def create_app(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    emulators = request.app[EMULATORS]
    if name in emulators:
        return web.json_response({"error": f"app {name!r} exists"}, status=409)
    slack = SlackEmulator(
        bot_token=f"xoxb-{name}",
        app_token=f"xapp-{name}",
        signing_secret=f"signing-secret-{name}",
    )
    await slack.start()
    slack.add_user(CLICKER, "alice")
    slack.add_channel(CHANNEL, "bench")
    emulators[name] = slack
    identity = slack.identity
    return web.json_response(
        {
            "api_url": slack.api_url,
            "bot_token": identity.bot_token,
            "app_token": identity.app_token,
            "signing_secret": identity.signing_secret,
            "channel": CHANNEL,
        }
    )


def emulator(request: web.Request) -> SlackEmulator:
    found = request.app[EMULATORS].get(request.match_info["name"])
    if found is None:
        raise web.HTTPNotFound(text="no such app", content_type="text/plain")
    return found


async def set_interactions(request: web.Request) -> web.Response:
    body: dict[str, Any] = await request.json()
    emulator(request).interactions_url = str(body["url"])
    return web.json_response({"ok": True})


async def socket_connections(request: web.Request) -> web.Response:
    return web.json_response({"connections": emulator(request).socket.connections_total})


async def wait_socket(request: web.Request) -> web.Response:
    after = int(request.query.get("after", "0"))
    serial = await emulator(request).wait_socket_connected(SOCKET_WAIT_S, after=after)
    return web.json_response({"connection": serial})


async def click(request: web.Request) -> web.Response:
    body: dict[str, Any] = await request.json()
    slack = emulator(request)
    via: Via = "socket" if body["via"] == "socket" else "http"
    message = slack.message(str(body["channel"]), str(body["ts"]))
    delivery = await slack.person(CLICKER).click_button(message, str(body["label"]), via=via)
    return web.json_response({"acked": delivery.acked, "error": delivery.error})


async def calls(request: web.Request) -> web.Response:
    counted = Counter(call.method for call in emulator(request).api_calls)
    return web.json_response(dict(counted))


async def collector(request: web.Request) -> web.Response:
    """The emulator's own garbage collector, off while a round is timed: its heap holds every
    message and call of the run, and a full collection (100-360 ms late in a run) would land
    on whichever side happened to be clicking."""
    body = await request.json()
    if body.get("on"):
        gc.enable()
    else:
        gc.collect()
        gc.disable()
    return web.json_response({"on": gc.isenabled()})


async def serve() -> None:
    app = web.Application()
    app[EMULATORS] = {}
    app.router.add_post("/apps/{name}", create_app)
    app.router.add_put("/apps/{name}/interactions", set_interactions)
    app.router.add_get("/apps/{name}/socket", socket_connections)
    app.router.add_post("/apps/{name}/socket", wait_socket)
    app.router.add_post("/apps/{name}/click", click)
    app.router.add_get("/apps/{name}/calls", calls)
    app.router.add_put("/collector", collector)
    try:
        await serve_until_told_to_stop(app, "Slack emulator control")
    finally:
        for slack in app[EMULATORS].values():
            await slack.stop()


def main() -> None:
    logging.basicConfig(level=logging.WARNING)
    asyncio.run(serve())


if __name__ == "__main__":
    main()
