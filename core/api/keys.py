"""Typed keys for what the aiohttp application carries."""

import weakref

from aiohttp import web

from core.broker import Broker

BROKER: web.AppKey[Broker] = web.AppKey("broker", Broker)
SOCKETS: web.AppKey[weakref.WeakSet[web.WebSocketResponse]] = web.AppKey("agent_sockets")
