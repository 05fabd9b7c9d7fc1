"""askbridge: AI agents ask people questions in Slack, Discord or a local web page.

The installed package. `askbridge.client` is the Python client and needs none of the server's
dependencies; `askbridge.core`, `askbridge.adapters` and `askbridge.bots` are the service.
"""

from askbridge.core.version import VERSION

# The installed distribution's version, which pyproject.toml sets; `askbridge --version` shows it.
__version__ = VERSION
