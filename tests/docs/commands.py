"""The shell commands of the README and the documentation, as the tests that run them find them.

A test runs a command through `doc_command(document, start)`, with both arguments written as
literals: `tests/test_doc_commands.py` reads those calls in every test file, and fails for a
command that no test runs and that is not on its short list of those that cannot run here.
"""

from __future__ import annotations

import ast
import re
import shlex
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
FENCE = re.compile(r"^(?P<indent>[ \t]*)```sh\n(?P<body>.*?)^(?P=indent)```", re.DOTALL | re.M)
ASSIGNMENT = re.compile(r"[A-Z][A-Z0-9_]*=\S*(\s+#.*)?")
HEREDOC = re.compile(r"<<-?'?(\w+)'?")
COMMENT = re.compile(r"(^|\s)# .*$", re.MULTILINE)


@dataclass(frozen=True)
class Command:
    document: str
    """Its file, relative to the repository: README.md, docs/how-to/audit.md."""
    text: str
    """As written, its lines joined as the shell joins them."""

    @property
    def key(self) -> tuple[str, str]:
        """The document and the command without comments or line breaks: the same command
        written twice in one document is one command."""
        return self.document, normalized(self.text)


def normalized(text: str) -> str:
    return " ".join(COMMENT.sub("", text.replace("\\\n", " ")).split())


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(document: Path) -> Iterator[str]:
    """The `sh` code blocks of `document`, indented ones (in a list) too, dedented."""
    for found in FENCE.finditer(document.read_text()):
        yield textwrap.dedent(found["body"])


def is_env_file(block: str) -> bool:
    """A block of `NAME=value` lines only: what goes in `.env`, not commands."""
    lines = [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
    return all(ASSIGNMENT.fullmatch(line.strip()) for line in lines)


def split(block: str) -> list[str]:
    """The commands of a block: a line continued with a backslash, a here-document and a quoted
    string over several lines are each one command; a block with `if … fi` is one script (its
    lines share variables)."""
    if re.search(r"^\s*if ", block, re.MULTILINE):
        return [block.strip("\n")]
    found: list[str] = []
    lines = iter(block.splitlines())
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        command = [line]
        while command[-1].endswith("\\") or _open_quote("\n".join(command)):
            command.append(next(lines))
        heredoc = HEREDOC.search(command[-1])
        if heredoc:
            for body in lines:
                command.append(body)
                if body == heredoc[1]:
                    break
        found.append("\n".join(command))
    return found


def _open_quote(text: str) -> bool:
    try:
        shlex.split(text, comments=True)
    except ValueError:  # No closing quotation: the command goes on on the next line
        return True
    return False


def commands() -> list[Command]:
    """Every command of the README and the documentation, in order."""
    return [
        Command(str(document.relative_to(ROOT)), text)
        for document in documents()
        for block in blocks(document)
        if not is_env_file(block)
        for text in split(block)
    ]


def env_files() -> list[tuple[str, str]]:
    """Every block that shows lines of `.env`: (document, block)."""
    return [
        (str(document.relative_to(ROOT)), block)
        for document in documents()
        for block in blocks(document)
        if is_env_file(block)
    ]


def doc_command(document: str, start: str) -> str:
    """The one command of `document` (relative to the repository) that is `start`, or else
    starts with it, as written. Write both as literals: that is how the completeness test finds
    them."""
    found = {
        command.key: command.text
        for command in commands()
        if command.document == document and normalized(command.text).startswith(start)
    }
    found = {key: text for key, text in found.items() if key[1] == start} or found
    assert len(found) == 1, f"{len(found)} commands start with {start!r} in {document}"
    return next(iter(found.values()))


def commands_run_by_tests(tests: Path = ROOT / "tests") -> dict[tuple[str, str], str]:
    """Each command a test takes with `doc_command`, and the first test file that does."""
    run: dict[tuple[str, str], str] = {}
    for path in sorted(tests.rglob("*.py")):
        if path == Path(__file__):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", "") == "doc_command"):
                continue
            values = [arg.value for arg in node.args if isinstance(arg, ast.Constant)]
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            literals = [value for value in values if isinstance(value, str)]
            assert len(literals) == 2 == len(node.args), f"{where}: give doc_command two literals"
            document, start = literals
            key = Command(document, doc_command(document, start)).key
            run.setdefault(key, where)
    return run
