"""Claude Code's permission suggestions as "always" choices, one option each.

A `PermissionRequest` carries the permission updates Claude Code would make if its user chose
"don't ask again": `addRules` (allow `Bash(npm test *)`), `addDirectories`, `setMode`
(`acceptEdits` for the session). Each becomes an option worded as Claude Code words it, and the
option chosen returns only its own suggestion as `updatedPermissions`. An option's label has at
most five words, so the rule itself is in its description. Every such option allows this call
(Claude Code applies updates only with an allow): one that lets nothing more run without
asking (a rule to refuse, `removeRules`, `setMode` plan) says so first ("Allow, then refuse
Bash"), and `replaceRules` names the rules it replaces. A question holds four options: with
more than two suggestions (Claude Code 2.1.332 suggests a rule, the working directory and
acceptEdits for a command that writes), the first has its option and "Always allow" takes them
all. A suggestion askbridge does not know (a type, a rule's behavior or a mode of a later
Claude Code) may allow more than any it knows: its option says it is unknown ("Allow, then
unknown change") and shows it as it is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from askbridge.core.permissions import ALWAYS
from askbridge.core.tool_view import by_code_point

MAX_CHOICES = 2
"""Suggestions shown one option each, besides Allow once and Deny."""
WHERE = {
    "session": "for the rest of this session",
    "localSettings": "in this project's local settings",
    "projectSettings": "in this project's settings",
    "userSettings": "in your user settings",
}
BEHAVIORS = {"allow": "always allow", "deny": "always refuse", "ask": "always ask about"}
"""What a rule does, by its `behavior`."""
THEN = "This call runs; then: "
"""Heads what an option does that lets nothing more run without asking, or that askbridge
cannot say: whoever picks it allows this call, as every "always" option does."""
UNKNOWN = "Allow, then unknown change"
"""The label of a suggestion askbridge does not know (its type, a rule's behavior, a mode):
Claude Code applies it as it is, and it may allow more than anything askbridge could say."""
MODES = {
    "acceptEdits": ("Allow all edits", "Accept every file edit {where}"),
    "bypassPermissions": ("Allow everything", "Skip every permission prompt {where}"),
    "plan": ("Allow, then plan mode", THEN + "plan without changing anything {where}"),
    "default": ("Allow, then ask every time", THEN + "ask for each call {where}"),
    "dontAsk": (
        "Allow, then refuse unasked",
        THEN + "refuse every call not allowed already {where}",
    ),
}


@dataclass(frozen=True)
class Remember:
    """One "always" option and the permission updates choosing it returns."""

    label: str
    description: str
    updates: tuple[dict[str, Any], ...]


def remember_options(suggestions: Sequence[Mapping[str, Any]]) -> list[Remember]:
    """The "always" options for `suggestions`; none without suggestions."""
    if not suggestions:
        return []
    every = _option(ALWAYS, suggestions)
    if len(suggestions) > MAX_CHOICES:
        return [_option(_label(suggestions[0]), suggestions[:1]), every]
    options: list[Remember] = []
    for suggestion in suggestions:
        option = _option(_label(suggestion), [suggestion])
        if option.label in {o.label for o in options}:
            option = Remember(f"{option.label} too", option.description, option.updates)
        options.append(option)
    return options


def _option(label: str, suggestions: Sequence[Mapping[str, Any]]) -> Remember:
    # A rule or a directory may hold a character that reorders or hides the text around it
    # (U+202E): shown by code point, as in the tool call, it is read as it is and the ask,
    # which refuses such characters in what people read, can be made.
    described = "; ".join(_described(s) for s in suggestions)
    updates = tuple(dict(s) for s in suggestions)
    return Remember(by_code_point(label), by_code_point(described), updates)


def _known(suggestion: Mapping[str, Any]) -> bool:
    """Whether askbridge can say what `suggestion` does."""
    kind = suggestion.get("type")
    if kind in ("addRules", "replaceRules", "removeRules"):
        return str(suggestion.get("behavior", "allow")) in BEHAVIORS
    if kind == "setMode":
        return str(suggestion.get("mode")) in MODES
    return kind in ("addDirectories", "removeDirectories")


def _unknown(suggestion: Mapping[str, Any]) -> str:
    """A suggestion askbridge does not know, as it is: its type and the rest, as JSON with
    every character beyond ASCII escaped, so nothing in it reorders or hides the text."""
    kind = json.dumps(suggestion.get("type"), ensure_ascii=True, default=str)
    rest = {key: value for key, value in suggestion.items() if key != "type"}
    raw = json.dumps(rest, ensure_ascii=True, default=str)
    return f"{THEN}a permission change askbridge does not know, which may allow more: {kind} {raw}"


def _label(suggestion: Mapping[str, Any]) -> str:
    if not _known(suggestion):
        return UNKNOWN
    kind = suggestion.get("type")
    if kind == "addRules":
        verb = _behavior(suggestion)
        tools = {str(r.get("toolName")) for r in _rules(suggestion)}
        named = next(iter(tools)) if len(tools) == 1 else "these"
        named = named if " " not in named and len(named) <= 40 else "these"
        if verb == BEHAVIORS["allow"]:
            return f"Always allow {named}"
        return f"Allow, then {verb.removeprefix('always ')} {named}"
    if kind == "replaceRules":
        return "Allow and replace rules"
    if kind == "removeRules":
        return "Allow, then remove rules"
    if kind in ("addDirectories", "removeDirectories"):
        one = len(_list(suggestion, "directories")) == 1
        if kind == "addDirectories":
            return "Allow this directory" if one else "Allow these directories"
        return "Allow, then remove directory" if one else "Allow, then remove directories"
    return MODES[str(suggestion.get("mode"))][0]


def _described(suggestion: Mapping[str, Any]) -> str:
    """What choosing `suggestion` does, as Claude Code says it."""
    if not _known(suggestion):
        return _unknown(suggestion)
    where = WHERE.get(str(suggestion.get("destination")), "from now on")
    kind = suggestion.get("type")
    rules = ", ".join(_rule(r) for r in _rules(suggestion))
    verb = _behavior(suggestion)
    if kind == "addRules":
        said = f"{verb} {rules} {where}"
        return said[:1].upper() + said[1:] if verb == BEHAVIORS["allow"] else THEN + said
    if kind == "replaceRules":
        replaced = f"every '{verb}' rule {where}"
        return f"Replace {replaced} with: {rules}" if rules else f"Remove {replaced}"
    if kind == "removeRules":
        return f"{THEN}no longer {verb} {rules} {where}"
    directories = ", ".join(_list(suggestion, "directories"))
    if kind == "addDirectories":
        return f"Allow access to {directories} {where}"
    if kind == "removeDirectories":
        return f"{THEN}no access to {directories} {where}"
    return MODES[str(suggestion.get("mode"))][1].format(where=where)


def _behavior(suggestion: Mapping[str, Any]) -> str:
    # Only of a suggestion askbridge knows (`_known`): an unknown behavior is shown as it is.
    return BEHAVIORS[str(suggestion.get("behavior", "allow"))]


def _rule(rule: Mapping[str, Any]) -> str:
    content = rule.get("ruleContent")
    return f"{rule.get('toolName')}({content})" if content else str(rule.get("toolName"))


def _rules(suggestion: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [r for r in suggestion.get("rules") or () if isinstance(r, Mapping)]


def _list(suggestion: Mapping[str, Any], key: str) -> list[str]:
    value = suggestion.get(key)
    return [str(v) for v in value] if isinstance(value, list) else []
