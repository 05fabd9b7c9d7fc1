"""The runnable askbridge service: settings, wiring, the CLI and a Python client."""
