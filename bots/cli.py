"""`askbridge serve` runs the service; `askbridge ask` gates a shell script on a human."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import re
import signal
import sys
import zipfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import aiohttp
from pydantic import ValidationError

from askbridge.bots.client import (
    AskbridgeClient,
    ClientError,
    Declined,
    Ended,
    Expired,
    Interrupted,
    InvalidRequest,
    checked,
    outcome,
)
from askbridge.bots.crash_hook import crash_point_from
from askbridge.bots.database_place import earlier_database, sqlite_path
from askbridge.bots.logs import configure_logging, lean_records
from askbridge.bots.settings import (
    Settings,
    given_names,
    unknown_variables,
    with_where_to_set,
)
from askbridge.bots.status_line import POLL_S as STATUS_POLL_S
from askbridge.bots.status_line import StatusLine, on_terminal
from askbridge.bots.surfaces import SURFACES, SetupCommand, surface_words
from askbridge.core import audit_log
from askbridge.core.errors import AskbridgeError, StartupError
from askbridge.core.escalation import ladder_example
from askbridge.core.store import open_store
from askbridge.core.store.factory import shown_url
from askbridge.core.version import VERSION

if TYPE_CHECKING:
    from askbridge.bots.service import Service

log = logging.getLogger("askbridge")
WORDS = surface_words()

EXIT_ANSWERED, EXIT_ERROR, EXIT_USAGE, EXIT_CANCELLED, EXIT_EXPIRED, EXIT_WITHDRAWN = (
    0,
    1,
    2,
    3,
    4,
    5,
)
EXIT_AUTH = 6
"""The server refused the API token (ASKBRIDGE_API_TOKEN)."""
EXIT_DECLINED = 7
"""Someone declined the typed form."""


EXIT_STATUSES = (
    (EXIT_ANSWERED, "answered"),
    (EXIT_USAGE, "invalid question or usage"),
    (EXIT_CANCELLED, "cancelled"),
    (EXIT_EXPIRED, "expired"),
    (EXIT_WITHDRAWN, "withdrawn (Ctrl-C or SIGTERM withdraws it)"),
    (EXIT_AUTH, "the API token was refused"),
    (EXIT_DECLINED, "a typed form was declined"),
    (EXIT_ERROR, "other errors (e.g. server unreachable)"),
)
"""What each exit status of `askbridge ask` means, as its help says."""

LOGGING_COMMANDS = ("serve", "mcp")
"""The commands that configure logging (ASKBRIDGE_LOG_FORMAT): their warnings are log lines."""

EXIT_CLOSED_PIPE = 141
"""What a shell reports for a command whose reader went away (128 + SIGPIPE)."""


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except _HookUsage as usage:
        return _hook_usage(usage, sys.argv[1:] if argv is None else argv)
    except BrokenPipeError:
        # The reader went away (`askbridge audit ID | head`): the rest is not wanted, and
        # neither is a traceback, nor the error again when Python flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_CLOSED_PIPE


def _main(argv: list[str] | None) -> int:
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        # argparse would blame the top-level command, with its usage; the subcommand the words
        # were given to says so, with its own.
        args.command_parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.setup is not None:
        # Reads no settings but its platform's: it is how a platform's app gets made before
        # askbridge runs.
        return _setup(args.setup, args.zip, args.command_parser.prog)
    if args.surface_steps is not None:
        args.command_parser.error(f"say which: {args.surface_steps}")
    try:
        settings = Settings()
    except ValidationError as error:
        if _runs_hook(args):
            return _cannot_run_hook(f"invalid settings: {'; '.join(_settings_problems(error))}")
        sys.stderr.write(f"askbridge: invalid settings:\n{_settings_errors(error)}\n")
        return EXIT_USAGE
    unknown = unknown_variables(given_names(os.environ))
    if args.command not in LOGGING_COMMANDS:
        for warning in unknown:
            sys.stderr.write(f"askbridge: warning: {warning}\n")
    if args.command == "serve":
        return _serve(settings, args, unknown)
    if args.command == "ask":
        return _ask(settings, args)
    if args.command == "audit":
        return _audit(settings, args)
    if args.command == "mcp":
        return _mcp(settings, args, unknown)
    if args.command == "hook":
        return _hook(settings, args)
    if args.command == "prune":
        return _prune(settings, args)
    parser.print_help(sys.stderr)
    return EXIT_USAGE


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="askbridge",
        description="Let AI agents ask people multiple-choice questions in chat.",
    )
    parser.add_argument("--version", action="version", version=f"askbridge {VERSION}")
    parser.set_defaults(command_parser=parser, setup=None, surface_steps=None, zip=None)
    commands = _Commands(parser.add_subparsers(dest="command"))
    serve = commands.add_parser("serve", help="run the service (agent API, web page, chat bots)")
    serve.add_argument("--host", help="address to bind (ASKBRIDGE_HOST)")
    serve.add_argument("--port", type=int, help="port to bind (ASKBRIDGE_PORT)")

    ask = commands.add_parser(
        "ask",
        help="ask one question through a running server and print the answers as JSON",
        description="Exit status: "
        + ", ".join(f"{code} {meaning}" for code, meaning in EXIT_STATUSES)
        + ". Progress (the request id, where to answer, an unreachable server) goes to stderr "
        "unless --quiet.",
    )
    ask.add_argument("--target", help=f"where to ask: {WORDS.targets()}")
    ask.add_argument("--question", help="the question text")
    ask.add_argument("--header", help="a short label (at most 12 characters)")
    ask.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="LABEL=DESCRIPTION",
        help="an option; give 2-4 of them",
    )
    ask.add_argument("--multi", action="store_true", help="allow several options")
    ask.add_argument(
        "--file",
        type=Path,
        help="a JSON file with {'questions': [...], ...} or {'form': {...}, ...}",
    )
    ask.add_argument("--timeout", type=float, help="give up after this many seconds")
    ask.add_argument("--context", help="a short line shown above the question")
    ask.add_argument("--request-id", help="an id of your own; asking again with it is safe")
    ask.add_argument(
        "--answerer",
        action="append",
        default=[],
        metavar="WHO",
        help=f"who may answer (repeat): {WORDS.answerer_entries()}; default anyone",
    )
    ask.add_argument("--quorum", type=int, help="how many must give the same answers")
    ask.add_argument(
        "--timeout-answer",
        action="append",
        default=[],
        metavar="HEADER=LABEL",
        help="the answer the deadline gives (repeat per question) instead of expiring",
    )
    ask.add_argument("--remind-after", type=float, metavar="SECONDS", help="remind once")
    ask.add_argument(
        "--allow-other", action="store_true", help="people may answer in their own words"
    )
    ask.add_argument(
        "--allow-notes", action="store_true", help="people may add a note to their answer"
    )
    ask.add_argument(
        "--callback-url",
        metavar="URL",
        help="also POST the signed status object here when the request ends",
    )
    ask.add_argument(
        "--escalation",
        type=_json_arg,
        metavar="JSON",
        help=f"escalation steps, e.g. '{ladder_example(WORDS)}'",
    )
    ask.add_argument("--subject", type=_json_arg, metavar="JSON", help="the JSON object to approve")
    ask.add_argument("--requested-by", metavar="WHO", help=f"who asks: {WORDS.people()}")
    ask.add_argument(
        "--no-self-approval",
        action="store_true",
        help="the person named by --requested-by may not answer",
    )
    ask.add_argument("--url", help="the server (ASKBRIDGE_URL, else ASKBRIDGE_HOST:PORT)")
    ask.add_argument("--quiet", action="store_true", help="print nothing but the answers")

    mcp = commands.add_parser(
        "mcp", help="serve the ask_user_question and ask_form tools to an MCP client over stdio"
    )
    mcp.add_argument("--url", help="the server (ASKBRIDGE_URL, else ASKBRIDGE_HOST:PORT)")
    mcp.add_argument(
        "--progress-every",
        type=float,
        default=15.0,
        metavar="SECONDS",
        help="while nobody has answered, tell the client this often that the tool still waits",
    )

    _hook_parser(commands)

    prune = commands.add_parser(
        "prune",
        help="delete requests that ended long ago, with their votes and audit trail",
        description="Works on the database of ASKBRIDGE_DATABASE_URL; never deletes a request "
        "that is still waiting.",
    )
    prune.add_argument(
        "--older-than", required=True, metavar="AGE", help="e.g. 90d, 12h, 30m (days by default)"
    )
    prune.add_argument(
        "--yes", action="store_true", help="needed with --older-than 0: delete every ended request"
    )

    _setup_parsers(commands)

    audit = commands.add_parser(
        "audit",
        help="print the audit trail as JSON lines, export it with its hashes, or verify an export",
        description="Without --export or --verify: print the events as JSON lines. --verify "
        "needs no server: it exits 0 when every hash chain in the file holds, 1 naming the "
        "first broken line.",
    )
    audit.add_argument("request_id", nargs="?", help="only this request id")
    audit.add_argument("--request", help="the same, as an option")
    audit.add_argument("--since", help="only events at or after this ISO 8601 time")
    audit.add_argument("--until", help="only events before this ISO 8601 time (with --export)")
    audit.add_argument(
        "--export", type=Path, metavar="FILE", help="write the events with their hashes (JSONL)"
    )
    audit.add_argument(
        "--verify", type=Path, metavar="FILE", help="check the hash chains of an exported file"
    )
    audit.add_argument("--url", help="the server (ASKBRIDGE_URL, else ASKBRIDGE_HOST:PORT)")
    return parser


class _Commands:
    """Subcommands that know their own parser: a usage error names the subcommand, with its
    usage, rather than `askbridge` with the top level's."""

    def __init__(self, action: Any) -> None:
        self.action = action

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = self.action.add_parser(name, **kwargs)
        # The innermost subcommand's defaults win: argparse copies them over its parents'.
        parser.set_defaults(command_parser=parser)
        return parser


def _setup_parsers(commands: _Commands) -> None:
    """`askbridge <surface> <command>` for every surface's setup commands, and the first
    name of a manifest command, `askbridge <surface>-manifest`."""
    for entry in SURFACES:
        if not entry.setup:
            continue
        name = entry.spec.name
        surface = commands.add_parser(
            name,
            help=f"what setting up {entry.spec.title} needs: "
            + ", ".join(command.name for command in entry.setup),
        )
        surface.set_defaults(surface_steps=", ".join(command.name for command in entry.setup))
        steps = _Commands(surface.add_subparsers(dest="step", metavar="COMMAND"))
        for command in entry.setup:
            _setup_parser(steps, command.name, command)
            if command.name == "manifest":
                _setup_parser(
                    commands, f"{name}-manifest", command, f"the same as askbridge {name} manifest"
                )


def _setup_parser(
    commands: _Commands, name: str, command: SetupCommand, help: str | None = None
) -> None:
    parser = commands.add_parser(name, help=help or command.help, description=command.help)
    parser.set_defaults(setup=command, surface_steps=None)
    if command.package:
        parser.add_argument(
            "--zip",
            metavar="FILE",
            help="write the whole app package (the manifest and any icons) to FILE instead",
        )


def _hook_parser(commands: _Commands) -> None:
    hook = commands.add_parser("hook", help="answer an agent host's hooks through askbridge")
    hosts = _Commands(hook.add_subparsers(dest="host", parser_class=_HookParser))
    claude = hosts.add_parser(
        "claude-code",
        help="Claude Code's command hook: read the hook input on stdin, print the decision",
        description="A PreToolUse hook for AskUserQuestion asks its questions; a "
        "PermissionRequest hook asks Allow once / Always allow / Deny; an Elicitation hook asks "
        "people to fill in an MCP server's form (or open its link). Flags fall back to "
        "ASKBRIDGE_HOOK_* settings. No answer, or no server: no decision (Claude Code asks in "
        "the terminal) and one line on stderr.",
    )
    claude.add_argument("--url", help="the server (ASKBRIDGE_URL, else ASKBRIDGE_HOST:PORT)")
    claude.add_argument(
        "--target", action="append", default=[], help="where to ask (repeat for several)"
    )
    claude.add_argument(
        "--answerer", action="append", default=[], metavar="WHO", help="who may answer (repeat)"
    )
    claude.add_argument("--quorum", type=int, help="how many must give the same answers")
    claude.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="the hook's timeout in Claude Code's settings (default 600); the question's "
        "deadline ends a little before it",
    )
    claude.add_argument(
        "--on-timeout",
        choices=["ask", "deny"],
        help="nobody answered in time: ask (no decision; the default) or deny",
    )
    claude.add_argument(
        "--print-settings",
        action="store_true",
        help="print the hooks block for .claude/settings.json instead of running the hook",
    )
    claude.add_argument(
        "--install",
        type=Path,
        metavar="SETTINGS_JSON",
        help="write the hooks --print-settings prints into this Claude Code settings file "
        "(.claude/settings.json, ~/.claude/settings.json): its other settings and hooks are "
        "kept, askbridge's own replaced",
    )
    claude.add_argument(
        "--uninstall",
        type=Path,
        metavar="SETTINGS_JSON",
        help="take askbridge's hooks out of this settings file, and nothing else",
    )
    claude.add_argument(
        "--http",
        action="store_true",
        help="with --print-settings or --install: an HTTP hook to the server instead of this "
        "command",
    )
    claude.add_argument(
        "--no-approvals",
        action="store_true",
        help="with --print-settings or --install: leave Claude Code's tool approvals in the "
        "terminal",
    )
    claude.add_argument(
        "--no-elicitations",
        action="store_true",
        help="with --print-settings or --install: leave MCP servers' requests for input "
        "(elicitations) in the terminal",
    )
    claude.add_argument(
        "--pre-tool-use",
        metavar="MATCHER",
        help="with --print-settings or --install: also ask before every call of these tools, e.g. "
        "'Bash|Write' (a PreToolUse matcher)",
    )


class _HookUsage(Exception):
    """A usage error of `askbridge hook claude-code`: `main` says what becomes of it."""

    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__(message)
        self.parser = parser


class _HookParser(argparse.ArgumentParser):
    """The hook command's parser, whose usage errors are raised rather than exited with:
    Claude Code reads a hook's exit status 2 as a decision."""

    def error(self, message: str) -> NoReturn:
        raise _HookUsage(self, message)


HOOK_TERMINAL_FLAGS = ("--print-settings", "--install", "--uninstall")
"""The hook command's flags for a person at a terminal; the command Claude Code runs has none."""


def _hook_usage(usage: _HookUsage, argv: list[str]) -> int:
    """At a terminal (printing or installing the settings): the usage error argparse gives.
    Run by Claude Code: no decision, saying why. Exit status 2 would refuse the tool call (deny
    the permission, decline the form), and the model would read the usage, while nobody was
    asked."""
    if any(flag in argv for flag in HOOK_TERMINAL_FLAGS):
        argparse.ArgumentParser.error(usage.parser, str(usage))
    return _cannot_run_hook(str(usage))


def _runs_hook(args: argparse.Namespace) -> bool:
    """Whether Claude Code runs this command as its hook."""
    if args.command != "hook" or getattr(args, "host", None) != "claude-code":
        return False
    return not any(getattr(args, flag[2:].replace("-", "_")) for flag in HOOK_TERMINAL_FLAGS)


def _cannot_run_hook(reason: str) -> int:
    """The hook's output that decides nothing, so Claude Code asks its own user, with the
    line that says why: the hook's command or settings are what to fix."""
    from askbridge.bots.claude_hook import undecided

    if not sys.stdin.isatty():
        sys.stdin.read()  # Claude Code writes the hook input whole, and is not refused it
    output, line = undecided(f"cannot run the hook: {reason}")
    sys.stderr.write(line + "\n")
    _print_json(output)
    return EXIT_ANSWERED


def _hook(settings: Settings, args: argparse.Namespace) -> int:
    from askbridge.bots.claude_hook import hooks_block, run_hook

    parser = args.command_parser
    if args.host != "claude-code":
        parser.error("say which host: askbridge hook claude-code")
    terminal = [f for f in HOOK_TERMINAL_FLAGS if getattr(args, f[2:].replace("-", "_"))]
    if len(terminal) > 1:
        parser.error(f"give one of {', '.join(terminal)}")
    if args.uninstall:
        return _settings_file(args.uninstall, None)
    given = {
        "target": args.target or None,
        "answerers": args.answerer or None,
        "quorum": args.quorum,
        "timeout_s": args.timeout,
        "on_timeout": args.on_timeout,
    }
    try:
        options = settings.hook_options().updated({k: v for k, v in given.items() if v is not None})
    except ValueError as error:
        parser.error(str(error))
    url = args.url or settings.server_url
    if args.print_settings or args.install:
        block = hooks_block(
            options,
            url=url,
            http=args.http,
            with_token=settings.api_token is not None,
            approvals=not args.no_approvals,
            pre_tool_use=args.pre_tool_use,
            elicitations=not args.no_elicitations,
        )
        if args.install:
            return _settings_file(args.install, block)
        _print_json(block, indent=2)
        return EXIT_ANSWERED
    # stderr is for the one line that says why no decision was made; DEBUG shows the rest.
    configure_logging("DEBUG" if settings.log_level == "DEBUG" else "ERROR", settings.secrets())
    token = settings.api_token.get_secret_value() if settings.api_token else None
    output, problem = asyncio.run(run_hook(sys.stdin.read(), options, url, token))
    if problem:
        sys.stderr.write(problem.replace("\n", " ") + "\n")
    _print_json(output)
    return EXIT_ANSWERED


def _settings_file(path: Path, block: dict[str, Any] | None) -> int:
    """Install the hooks `block` in the Claude Code settings file `path`, or, with None, take
    askbridge's hooks out of it; the file is written only when that changes it."""
    from askbridge.bots import claude_settings

    try:
        before = claude_settings.read(path)
        if block is None:
            after = claude_settings.uninstalled(before)
            said = f"took askbridge's hooks out of {path}"
        else:
            after = claude_settings.installed(before, block)
            said = f"wrote askbridge's hooks ({', '.join(block['hooks'])}) into {path}"
        if after == before:
            said = f"{path} is as it was: it already holds " + (
                "no askbridge hook" if block is None else "these hooks"
            )
        elif after or path.exists():
            claude_settings.write(path, after)
    except (claude_settings.SettingsFileError, OSError) as error:
        sys.stderr.write(f"askbridge: {error}\n")
        return EXIT_ERROR
    sys.stderr.write(f"askbridge: {said}\n")
    return EXIT_ANSWERED


def _serve(settings: Settings, args: argparse.Namespace, unknown: list[str]) -> int:
    # Loaded only here: the hook and the client start fast.
    from askbridge.bots.event_loop import loop_factory
    from askbridge.bots.service import Service

    overrides = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
    settings = settings.model_copy(update=overrides)
    configure_logging(settings.log_level, settings.secrets(), settings.log_format)
    _log_unknown(unknown)
    lean_records()
    try:
        crash_point = crash_point_from(os.environ)
        with asyncio.Runner(loop_factory=loop_factory(settings.event_loop)) as runner:
            runner.run(_run_until_signalled(Service(settings, crash_point=crash_point)))
    except StartupError as error:
        log.error("cannot start: %s", error)
        return EXIT_ERROR
    except OSError as error:
        log.error(
            "cannot listen on %s:%s (%s); set ASKBRIDGE_PORT or ASKBRIDGE_HOST",
            settings.host,
            settings.port,
            error.strerror or error,
        )
        return EXIT_ERROR
    return EXIT_ANSWERED


def _log_unknown(unknown: list[str]) -> None:
    """In the log's own format, for whatever collects it (ASKBRIDGE_LOG_FORMAT=json)."""
    for warning in unknown:
        log.warning("%s", warning)


async def _run_until_signalled(service: Service) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    from askbridge.bots.service import settle_heap

    await service.start()
    settle_heap()
    try:
        await stop.wait()
        log.info("stopping")
    finally:
        await service.stop()


def _ask(settings: Settings, args: argparse.Namespace) -> int:
    try:
        body = _ask_body(args)
    except ValueError as error:
        args.command_parser.error(str(error))
    url = args.url or settings.server_url
    token = settings.api_token.get_secret_value() if settings.api_token else None
    # A person at a terminal sees one line of what the question waits for; a script reading
    # stderr gets whole lines only.
    line = None if args.quiet or not on_terminal(sys.stderr) else StatusLine(sys.stderr)
    tell = _quiet if args.quiet else _tell if line is None else _above(line)
    try:
        answers = asyncio.run(_ask_and_wait(url, token, body, tell, line))
    except (KeyboardInterrupt, asyncio.CancelledError):
        # Ctrl-C, or SIGTERM (how a CI runner cancels a job): _ask_and_wait withdrew it.
        sys.stderr.write("askbridge: interrupted; the question was withdrawn\n")
        return EXIT_WITHDRAWN
    except InvalidRequest as error:
        sys.stderr.write(f"askbridge: {error}\n")
        return EXIT_USAGE
    except Interrupted as error:
        _print_json(error.status_object)
        sys.stderr.write("askbridge: cancelled by someone; no answer\n")
        return EXIT_CANCELLED
    except Expired as error:
        _print_json(error.status_object)
        sys.stderr.write("askbridge: nobody answered before the deadline\n")
        return EXIT_EXPIRED
    except Declined as error:
        _print_json(error.status_object)
        who = (error.status_object.get("declined_by") or {}).get("name") or "the deadline"
        sys.stderr.write(f"askbridge: declined by {who}\n")
        return EXIT_DECLINED
    except Ended as error:
        _print_json(error.status_object)
        sys.stderr.write(f"askbridge: {error}\n")
        return EXIT_WITHDRAWN
    except ClientError as error:
        sys.stderr.write(f"askbridge: {with_where_to_set(error)}\n")
        if error.status == 401:
            return EXIT_AUTH
        return EXIT_USAGE if 400 <= error.status < 500 else EXIT_ERROR
    _print_json(answers)
    return EXIT_ANSWERED


def _tell(line: str) -> None:
    sys.stderr.write(f"askbridge: {line}\n")
    sys.stderr.flush()


def _quiet(line: str) -> None:
    """--quiet: progress is not printed."""


def _above(status: StatusLine) -> Callable[[str], None]:
    return lambda line: status.say(f"askbridge: {line}")


def where_to_answer(url: str, status: dict[str, Any]) -> str:
    """Where people see a posted request, for the person who asked."""
    places = []
    for message in status.get("messages") or []:
        platform, channel = message.get("platform"), message.get("channel")
        if platform == "web":
            places.append(f"{url}/q/{status['request_id']}")
        else:
            places.append(f"{platform} channel {channel}")
    return ", ".join(places) or "nowhere yet"


async def _ask_and_wait(
    url: str,
    token: str | None,
    body: dict[str, Any],
    tell: Callable[[str], None],
    line: StatusLine | None = None,
) -> dict[str, Any]:
    ask = checked(body)  # refused here, with the server's words, before anything is sent
    # SIGTERM ends the wait as Ctrl-C does, so the question does not outlive the command.
    task = asyncio.current_task()
    assert task is not None
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    async with AskbridgeClient(url, token, notice=tell) as client:
        created = await client.create(ask)
        request_id = created["request_id"]
        tell(f"asked {request_id}; answer at {where_to_answer(client.url, created)}")
        ticking = None
        if line is not None and created["status"] == "waiting":
            line.show(created)
            ticking = asyncio.create_task(line.ticking(), name="status-line")
        try:
            if line is None:
                final = await client.wait(request_id, recreate=ask.body())
            else:
                final = await client.wait(
                    request_id, recreate=ask.body(), poll_s=STATUS_POLL_S, seen=line.show
                )
        except asyncio.CancelledError:
            # Ctrl-C or SIGTERM: take the question back so nobody answers into the void.
            with contextlib.suppress(ClientError):
                await asyncio.shield(client.withdraw(request_id))
            raise
        finally:
            if ticking is not None:
                ticking.cancel()
            if line is not None:
                line.close()
        if final.get("form") is not None and final["status"] == "answered":
            content: dict[str, Any] = final["content"]
            return content
        return outcome(final).answers


def _ask_body(args: argparse.Namespace) -> dict[str, Any]:
    if args.file:
        try:
            body = json.loads(args.file.read_text())
        except (OSError, json.JSONDecodeError) as error:
            raise ValueError(f"--file {args.file}: {error}") from error
        if not isinstance(body, dict) or not ("questions" in body or "form" in body):
            raise ValueError(f"--file {args.file}: expected an object with 'questions' or a 'form'")
    else:
        if not (args.question and args.header and args.option):
            raise ValueError("give --question, --header and 2-4 --option, or --file")
        options = []
        for text in args.option:
            label, _, description = text.partition("=")
            options.append({"label": label.strip(), "description": description.strip()})
        body = {
            "questions": [
                {
                    "question": args.question,
                    "header": args.header,
                    "options": options,
                    "multi_select": args.multi,
                }
            ]
        }
    timeout_answers = {}
    for text in args.timeout_answer:
        header, _, label = text.partition("=")
        timeout_answers[header.strip()] = label.strip()
    for key, value in (
        ("target", args.target),
        ("timeout_s", args.timeout),
        ("context", args.context),
        ("request_id", args.request_id),
        ("answerers", args.answerer or None),
        ("quorum", args.quorum),
        ("on_timeout", {"answers": timeout_answers} if timeout_answers else None),
        ("remind_after_s", args.remind_after),
        ("allow_other", args.allow_other or None),
        ("allow_notes", args.allow_notes or None),
        ("callback_url", args.callback_url),
        ("escalation", args.escalation),
        ("subject", args.subject),
        ("requested_by", args.requested_by),
        ("no_self_approval", args.no_self_approval or None),
    ):
        if value is not None:
            body[key] = value
    return body


def _json_arg(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"not JSON: {error}") from None


def _mcp(settings: Settings, args: argparse.Namespace, unknown: list[str]) -> int:
    try:
        from askbridge.bots.mcp_server import (
            build_server,  # the MCP SDK loads only for this command
        )
    except ImportError as error:
        sys.stderr.write(
            f"askbridge: the MCP SDK is not installed ({error}); "
            "run: pip install 'askbridge[mcp]'\n"
        )
        return EXIT_ERROR

    # stdout carries the protocol; logs go to stderr.
    configure_logging(settings.log_level, settings.secrets(), settings.log_format)
    _log_unknown(unknown)
    token = settings.api_token.get_secret_value() if settings.api_token else None
    server = build_server(args.url or settings.server_url, token, args.progress_every)
    asyncio.run(server.run_stdio_async())
    return EXIT_ANSWERED


def _audit(settings: Settings, args: argparse.Namespace) -> int:
    url = args.url or settings.server_url
    token = settings.api_token.get_secret_value() if settings.api_token else None
    if args.request_id and args.request and args.request_id != args.request:
        sys.stderr.write(
            f"askbridge audit: {args.request_id!r} and --request {args.request!r} name two "
            "requests; give one\n"
        )
        return EXIT_USAGE
    request_id = args.request_id or args.request
    if args.verify is not None:
        if args.export is not None:
            sys.stderr.write("askbridge audit: give --export or --verify, not both\n")
            return EXIT_USAGE
        return _verify(args.verify)
    if args.export is not None:
        return _export(url, token, args.export, request_id, args.since, args.until)
    if args.until:
        sys.stderr.write("askbridge audit: --until works with --export\n")
        return EXIT_USAGE

    async def fetch() -> list[dict[str, Any]]:
        async with AskbridgeClient(url, token, reconnect_for_s=0) as client:
            return await client.events(request_id, args.since)

    try:
        events = asyncio.run(fetch())
    except ClientError as error:
        sys.stderr.write(f"askbridge: {with_where_to_set(error)}\n")
        return EXIT_USAGE if 400 <= error.status < 500 else EXIT_ERROR
    for event in events:
        _print_json(event)
    return EXIT_ANSWERED


def _export(
    url: str, token: str | None, file: Path, request_id: str | None, since: str, until: str
) -> int:
    """Write the audit log with its hashes to `file` (JSON lines, oldest first)."""
    lines = 0
    last = b""

    async def export() -> None:
        with file.open("wb") as out:

            def write(line: bytes) -> None:
                nonlocal lines, last
                out.write(line)
                lines += 1
                last = line

            async with AskbridgeClient(url, token, reconnect_for_s=0) as client:
                await client.export_audit(write, request_id=request_id, since=since, until=until)

    try:
        asyncio.run(export())
    except OSError as error:
        sys.stderr.write(f"askbridge audit: cannot write {file}: {error}\n")
        return EXIT_ERROR
    except ClientError as error:
        sys.stderr.write(f"askbridge: {with_where_to_set(error)}\n")
        return EXIT_USAGE if 400 <= error.status < 500 else EXIT_ERROR
    except aiohttp.ClientError as error:
        last = b""
        sys.stderr.write(f"askbridge audit: the export from {url} broke off: {error}\n")
    if not last.startswith(b'{"' + audit_log.END.encode()):
        sys.stderr.write(f"askbridge audit: {file} is incomplete: the server did not finish it\n")
        return EXIT_ERROR
    events = max(lines - 2, 0)
    sys.stderr.write(f"askbridge audit: exported {_count(events, 'event')} to {file}\n")
    return EXIT_ANSWERED


def _verify(file: Path) -> int:
    """Check every hash chain in an exported file; name the first broken line."""
    try:
        with file.open(encoding="utf-8") as lines:
            found = audit_log.verify(lines)
    except (OSError, UnicodeDecodeError) as error:
        sys.stderr.write(f"askbridge audit: cannot read {file}: {error}\n")
        return EXIT_ERROR
    if isinstance(found, audit_log.Broken):
        sys.stderr.write(f"askbridge audit: {file}: broken at {found}\n")
        return EXIT_ERROR
    partial = (
        f"; {found.partial} of them checked from the export's start (--since)"
        if found.partial
        else ""
    )
    earlier = (
        f"; {found.earlier} of them hashed over the canonical JSON used before RFC 8785"
        if found.earlier
        else ""
    )
    sys.stdout.write(
        f"{file}: OK, {_count(found.events, 'event')} of {_count(found.requests, 'request')}, "
        f"every hash chain holds{partial}{earlier}\n"
    )
    return EXIT_ANSWERED


AGE = re.compile(r"(\d+(?:\.\d+)?)([dhms]?)")
AGE_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1, "": 86400}


def _prune(settings: Settings, args: argparse.Namespace) -> int:
    age = AGE.fullmatch(args.older_than.strip())
    if age is None:
        sys.stderr.write(
            f"askbridge prune: --older-than takes 90d, 12h, 30m or 45s, got {args.older_than!r}\n"
        )
        return EXIT_USAGE
    keep = timedelta(seconds=float(age[1]) * AGE_UNITS[age[2]])
    if not keep and not args.yes:
        sys.stderr.write(
            f"askbridge prune: --older-than {args.older_than.strip()} deletes every request "
            "that has ended, with its votes and audit trail; add --yes to do that\n"
        )
        return EXIT_USAGE
    missing = _missing_database(settings)
    if missing is not None:
        sys.stderr.write(f"askbridge prune: {missing}\n")
        return EXIT_ERROR

    async def prune() -> int:
        # Beside a running server: a SQLite file stays the server's, and so does upgrading the
        # schema, which an older server still running would not know.
        store = open_store(
            settings.database_url,
            sqlite_sync=settings.sqlite_sync,
            serving=False,
            upgrade=False,
        )
        await store.open()
        try:
            return await store.prune(datetime.now(UTC) - keep)
        finally:
            await store.close()

    try:
        pruned = asyncio.run(prune())
    except AskbridgeError as error:
        sys.stderr.write(f"askbridge prune: {error}\n")
        return EXIT_ERROR
    sys.stderr.write(
        f"askbridge prune: deleted {_count(pruned, 'request')} that ended more than "
        f"{args.older_than.strip()} ago\n"
    )
    return EXIT_ANSWERED


def _missing_database(settings: Settings) -> str | None:
    """Why a one-off command must not open the SQLite database: it does not exist, and opening
    it would make an empty one (somewhere no server reads). None: it exists, or is not SQLite."""
    path = sqlite_path(settings.database_url)
    if path is None or path.is_file():
        return None
    given = "database_url" in settings.model_fields_set
    where = (
        f"ASKBRIDGE_DATABASE_URL={shown_url(settings.database_url)}"
        if given
        else "the default place (ASKBRIDGE_DATABASE_URL is unset)"
    )
    problem = (
        f"there is no database at {path.absolute()}, {where}; set ASKBRIDGE_DATABASE_URL to the "
        "database the server uses"
    )
    earlier = None if given else earlier_database(Path.cwd())
    if earlier is not None:
        problem += f" (an earlier askbridge's may be sqlite:///{earlier})"
    return problem


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _print_json(value: Any, indent: int | None = None) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=indent) + "\n")
    sys.stdout.flush()


def _setup(command: SetupCommand, zip_to: str | None, prog: str) -> int:
    try:
        files = command.files()
    except StartupError as error:
        sys.stderr.write(f"{prog}: {error}\n")
        return EXIT_USAGE
    except ValidationError as error:
        sys.stderr.write(f"{prog}: invalid settings:\n{_settings_errors(error)}\n")
        return EXIT_USAGE
    if zip_to is None:
        sys.stdout.write(next(iter(files.values())).decode())
        return 0
    with zipfile.ZipFile(zip_to, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    sys.stderr.write(f"{prog}: wrote {', '.join(files)} to {zip_to}\n")
    return 0


def _settings_errors(error: ValidationError) -> str:
    return "\n".join(f"- {problem}" for problem in _settings_problems(error))


def _settings_problems(error: ValidationError) -> list[str]:
    problems = []
    for detail in error.errors():
        name = "_".join(str(part) for part in detail["loc"])
        # A field named in full by its alias (a platform SDK's own variable) is in capitals.
        name = name if name.isupper() else f"ASKBRIDGE_{name.upper()}"
        problems.append(f"{name}: {detail['msg']} (got {detail.get('input')!r})")
    return problems


if __name__ == "__main__":
    sys.exit(main())
