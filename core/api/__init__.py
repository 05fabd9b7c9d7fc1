"""The agent API: HTTP routes and the agent WebSocket, on aiohttp."""

from askbridge.core.api.app import add_api_routes, api_middlewares
from askbridge.core.api.health import add_health_routes

__all__ = ["add_api_routes", "add_health_routes", "api_middlewares"]
