"""The agent API: HTTP routes and the agent WebSocket, on aiohttp."""

from core.api.app import add_api_routes, api_middlewares

__all__ = ["add_api_routes", "api_middlewares"]
