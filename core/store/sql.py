"""A statement written once, with named parameters (`:request_id`), bound per dialect at import.

SQLite binds the names itself; PostgreSQL gets `$1, $2, …` in their order and a getter that lines
the values up, both made once here and not per call. The few clauses that mean something on one
database only are translated below; a statement that truly differs is given per dialect (None
there: nothing to run). See ARCHITECTURE.md, "The store's roles".
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal, NamedTuple

Want = Literal["rows", "row", "value", "count", "run", "notify"]
Params = Mapping[str, Any]

_NAME = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
# A row lock is PostgreSQL's: a SQLite writer holds the whole database from `BEGIN IMMEDIATE`,
# so SQLite drops it.
_ROW_LOCK = re.compile(r"\s+FOR (?:NO KEY UPDATE|UPDATE|SHARE)(?: SKIP LOCKED)?")
# `INDEXED BY` is SQLite's (its planner has no statistics to choose the partial indexes by);
# PostgreSQL drops it.
_INDEXED_BY = re.compile(r"\s+INDEXED BY \w+")


class Step(NamedTuple):
    """One statement for a store to run, with what the script wants back: every row, the
    first row (or None), its first value (or None), how many rows it changed, or nothing (a
    schema change). (A tuple: a click makes a dozen of them.)"""

    query: Query
    params: Params
    want: Want


class Query:
    """`sqlite` and `postgres`: the statement in each dialect (None: that database has
    nothing to run for it)."""

    __slots__ = ("_order", "postgres", "sqlite")

    def __init__(self, text: str | None, *, postgres: str | Literal[False] | None = False) -> None:
        """`text` in both dialects, translated as the comments above say; `postgres`: the
        PostgreSQL statement when it differs (`text` then is SQLite's alone)."""
        pg_text = text if postgres is False else postgres
        # `greatest(a, b)` is SQLite's two-argument `max(a, b)`, used on values never NULL
        # (SQLite's is NULL when either is).
        self.sqlite = None if text is None else _ROW_LOCK.sub("", text.replace("greatest(", "max("))
        self.postgres: str | None = None
        self._order: Callable[[Params], tuple[Any, ...]] = _nothing
        if pg_text is not None:
            names = list(dict.fromkeys(_NAME.findall(pg_text)))
            numbered = {name: f"${index}" for index, name in enumerate(names, 1)}
            self.postgres = _NAME.sub(lambda m: numbered[m[1]], _INDEXED_BY.sub("", pg_text))
            self._order = _getter(names)

    def args(self, params: Params) -> tuple[Any, ...]:
        """`params` in the order of the PostgreSQL statement's `$n`."""
        return self._order(params)

    def rows(self, **params: Any) -> Step:
        return Step(self, params, "rows")

    def row(self, **params: Any) -> Step:
        return Step(self, params, "row")

    def value(self, **params: Any) -> Step:
        return Step(self, params, "value")

    def count(self, **params: Any) -> Step:
        return Step(self, params, "count")

    def run(self, **params: Any) -> Step:
        return Step(self, params, "run")

    @classmethod
    def verbatim(cls, text: str) -> Query:
        """`text` as it is, on either database, without parameters: a migration's statement,
        which is written for its database already."""
        query = cls(None, postgres=None)
        query.sqlite = query.postgres = text
        return query


def _nothing(_params: Params) -> tuple[Any, ...]:
    return ()


def _getter(names: list[str]) -> Callable[[Params], tuple[Any, ...]]:
    if not names:
        return _nothing
    if len(names) == 1:
        name = names[0]
        return lambda params: (params[name],)
    return operator.itemgetter(*names)


NOTIFY = Query(None, postgres="SELECT pg_notify(:channel, :payload)")
"""Tell other replicas that a request changed (`Step.want` "notify": the store fills in its
channel and who it is); one process owns a SQLite file, so there is no one to tell."""


def notify(request_id: str) -> Step:
    return Step(NOTIFY, {"request_id": request_id}, "notify")
