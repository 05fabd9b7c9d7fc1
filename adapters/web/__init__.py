"""The built-in answer page, served by askbridge itself at `/`."""

from askbridge.adapters.web.handlers import add_web_routes, form_key
from askbridge.adapters.web.surface import WebSurface

__all__ = ["WebSurface", "add_web_routes", "form_key"]
