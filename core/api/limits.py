"""The bounds of the agent API's query parameters, shared by the routes and their description."""

MAX_WAIT_S = 300.0
"""The longest long-poll; a larger `wait` waits this long."""
MAX_LIST = 1000
"""The most requests one `GET /v1/questions` lists."""
MAX_EVENTS = 10_000
"""The most events one `GET /v1/events` returns."""
