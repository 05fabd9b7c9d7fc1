"""Durable state of every request. `Store` is the seam; SQLite is the embedded default."""

from askbridge.core.store.base import Event, Store
from askbridge.core.store.factory import open_store

__all__ = ["Event", "Store", "open_store"]
