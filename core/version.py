"""askbridge's version, as installed."""

from importlib.metadata import PackageNotFoundError, version

try:
    VERSION = version("askbridge")
except PackageNotFoundError:  # running from a source tree that was never installed
    VERSION = "0+unknown"
