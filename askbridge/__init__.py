"""askbridge: AI agents ask people questions in Slack, Discord or a web page.

The installed package. `askbridge.client` is the Python client and needs none of the server's
dependencies; `askbridge.core`, `askbridge.adapters` and `askbridge.bots` are the service.
"""
