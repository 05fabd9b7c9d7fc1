"""Typed keys for what the aiohttp application carries."""

import weakref

from aiohttp import web

from askbridge.core.api.orphans import Orphans
from askbridge.core.broker import Broker
from askbridge.core.surface import SurfaceWords

BROKER: web.AppKey[Broker] = web.AppKey("broker", Broker)
SOCKETS: web.AppKey[weakref.WeakSet[web.WebSocketResponse]] = web.AppKey("agent_sockets")
ORPHANS: web.AppKey[Orphans] = web.AppKey("permission_orphans", Orphans)
WORDS: web.AppKey[SurfaceWords] = web.AppKey("surface_words", SurfaceWords)
"""The server's surfaces, for the examples in validation messages and the API's documents."""
