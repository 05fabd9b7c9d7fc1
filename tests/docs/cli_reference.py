"""The command-line reference: each command's `--help`, from the parser `askbridge` runs, and
the exit statuses of `askbridge ask`, from the table its help is made from."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator

from askbridge.bots.cli import EXIT_STATUSES, _parser

WIDTH = "100"
"""argparse wraps to the terminal's width (COLUMNS); the page is the same on every machine."""


def cli_page() -> str:
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        sections = [
            f"\n## `{parser.prog}`\n\n```text\n{parser.format_help().rstrip()}\n```\n"
            for parser in commands(_parser())
        ]
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous
    return "".join(sections)


def commands(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """The parser and every subcommand's, depth first, in the order they were added."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield from commands(sub)


def exit_statuses_page() -> str:
    rows = [f"| `{code}` | {meaning} |" for code, meaning in EXIT_STATUSES]
    return "\n".join(["| status | when |", "|---|---|", *rows]) + "\n"
