"""The built-in answer page, served by askbridge itself at `/`."""

from adapters.web.routes import add_web_routes, form_key
from adapters.web.surface import WebSurface

__all__ = ["WebSurface", "add_web_routes", "form_key"]
