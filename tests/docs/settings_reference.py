"""The settings reference: every variable of the settings model, with `.env.example`'s words.

The model says which variables exist and their defaults and bounds; `.env.example`, which must
mirror the model line for line, says what each one means. A variable missing from either side
stops the build, so the page can never leave a setting out.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import AliasChoices, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined
from pydantic_settings import BaseSettings

from askbridge.bots.settings import Settings
from askbridge.bots.surfaces import platform_settings

ROOT = Path(__file__).resolve().parent.parent.parent
ENV_EXAMPLE = ROOT / ".env.example"

_SECTION = re.compile(r"^# --- (?P<title>.+?) [-(]")
_VARIABLE = re.compile(r"^#? ?(?P<name>[A-Z][A-Z0-9_]+)=")


@dataclass(frozen=True)
class Setting:
    variable: str
    section: str
    meaning: str
    default: str
    values: str


def settings_models() -> list[type[BaseSettings]]:
    """The settings models whose variables askbridge reads: its own and each platform's."""
    return [Settings, *platform_settings()]


def variable(model: type[BaseSettings], name: str, field: FieldInfo) -> str:
    """The environment variable a settings field reads."""
    alias = field.validation_alias
    if isinstance(alias, AliasChoices):
        return str(alias.choices[0])
    prefix = str(model.model_config.get("env_prefix", ""))
    return prefix + name.upper()


def explained(example: str) -> dict[str, tuple[str, str]]:
    """Each variable of `.env.example` -> (its section, its comment as one paragraph)."""
    found: dict[str, tuple[str, str]] = {}
    section, comment = "", list[str]()
    for line in example.splitlines():
        if heading := _SECTION.match(line):
            section, comment = heading["title"], []
        elif named := _VARIABLE.match(line):
            found[named["name"]] = (section, " ".join(comment))
            comment = []
        elif line.startswith("#") and section:
            comment.append(line.lstrip("#").strip())
        else:
            comment = []
    return found


def settings() -> list[Setting]:
    """Every setting, in `.env.example`'s order; ValueError names a variable on one side only."""
    words = explained(ENV_EXAMPLE.read_text())
    fields = {
        variable(model, name, field): field
        for model in settings_models()
        for name, field in model.model_fields.items()
    }
    if missing := sorted(set(fields) - set(words)):
        raise ValueError(f"not in .env.example, so not documented: {', '.join(missing)}")
    if stray := sorted(set(words) - set(fields)):
        raise ValueError(f".env.example names variables askbridge does not read: {stray}")
    return [
        Setting(name, section, meaning, _default(fields[name]), _values(fields[name]))
        for name, (section, meaning) in words.items()
    ]


def settings_page() -> str:
    """The reference's tables, one per section of `.env.example`."""
    lines: list[str] = []
    section = None
    for setting in settings():
        if setting.section != section:
            section = setting.section
            lines += ["", f"## {section}", "", "| variable | default | values | meaning |"]
            lines.append("|---|---|---|---|")
        cells = (f"`{setting.variable}`", setting.default, setting.values, setting.meaning)
        lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def _default(field: FieldInfo) -> str:
    value = field.default
    if value is PydanticUndefined or value is None:
        return "unset"
    if isinstance(value, SecretStr):
        return "(secret)"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"`{value}`"


def _values(field: FieldInfo) -> str:
    """What the model accepts: the choices of a Literal, the bounds of a number."""
    annotation: Any = field.annotation
    optional = get_origin(annotation) in (Union, UnionType)
    kinds = [a for a in get_args(annotation) if a is not type(None)] if optional else [annotation]
    for kind in kinds:
        kind = getattr(kind, "__value__", kind)  # a `type` alias, such as EventLoop
        if get_origin(kind) is Literal:
            return ", ".join(f"`{choice}`" for choice in get_args(kind))
    bounds = []
    for rule in field.metadata:
        for attribute, sign in (("gt", ">"), ("ge", "≥"), ("lt", "<"), ("le", "≤")):
            if isinstance(rule, getattr(annotated_types, attribute.capitalize())):
                bound = getattr(rule, attribute)
                shown = int(bound) if isinstance(bound, float) and bound.is_integer() else bound
                bounds.append(f"{sign} {shown}")
    kind = kinds[0]
    name = {int: "integer", float: "number", str: "text", SecretStr: "secret text"}.get(kind)
    described = name or getattr(kind, "__name__", str(kind))
    return f"{described} {', '.join(bounds)}".strip()


def _cell(text: str) -> str:
    """Table cell Markdown: pipes escaped, and angle brackets outside code spans, which would
    otherwise open HTML tags."""
    parts = text.replace("|", "\\|").split("`")
    return "`".join(p if i % 2 else html.escape(p, quote=False) for i, p in enumerate(parts))
