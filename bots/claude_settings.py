"""askbridge's hooks written into a Claude Code settings file, and taken out again.

`askbridge hook claude-code --install FILE` merges the hooks block `--print-settings` prints
into FILE (`.claude/settings.json`, `.claude/settings.local.json`, `~/.claude/settings.json`):
every other setting and every other hook stays as it was, and askbridge's own hooks, from an
earlier install or pasted by hand, are replaced, so installing twice writes the file once.
`--uninstall FILE` takes out askbridge's hooks and nothing else.
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from askbridge.core.errors import AskbridgeError
from askbridge.core.hooks.claude_code import CLAUDE_CODE_PATH


class SettingsFileError(AskbridgeError):
    """The settings file cannot be read as Claude Code reads it; the text names the file."""


def installed(settings: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    """`settings` with askbridge's hooks replaced by the ones in `ours` (a hooks block)."""
    kept = uninstalled(settings)
    hooks: dict[str, Any] = dict(kept.get("hooks") or {})
    for event, groups in ours["hooks"].items():
        hooks[event] = [*hooks.get(event, []), *groups]
    return {**kept, "hooks": hooks}


def uninstalled(settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` without askbridge's hooks: a matcher left with no hook goes, and so does an
    event left with no matcher, and `hooks` left empty."""
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return dict(settings)
    kept: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            kept[event] = groups
            continue
        left = [_without_ours(group) for group in groups]
        left = [group for group in left if group is not None]
        if left:
            kept[event] = left
    if kept:
        return {**settings, "hooks": kept}
    return {key: value for key, value in settings.items() if key != "hooks"}


def _without_ours(group: Any) -> Any:
    """A matcher group without askbridge's hooks; None when none of its hooks are left."""
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return group
    left = [hook for hook in group["hooks"] if not is_ours(hook)]
    if not left:
        return None
    return {**group, "hooks": left}


def is_ours(hook: Any) -> bool:
    """Whether `hook` is askbridge's: a command that runs `… hook claude-code …`, or an HTTP
    hook to askbridge's hook endpoint."""
    if not isinstance(hook, dict):
        return False
    if hook.get("type") == "command" and isinstance(hook.get("command"), str):
        try:
            args = shlex.split(hook["command"])
        except ValueError:
            return False
        return any(args[i : i + 2] == ["hook", "claude-code"] for i in range(len(args)))
    if hook.get("type") == "http" and isinstance(hook.get("url"), str):
        return urlsplit(hook["url"]).path.rstrip("/") == CLAUDE_CODE_PATH
    return False


def read(path: Path) -> dict[str, Any]:
    """The settings in `path` ({} when there is no such file); SettingsFileError when Claude
    Code could not read them either."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as error:
        raise SettingsFileError(f"cannot read {path}: {error}") from None
    if not text.strip():
        return {}
    try:
        found = json.loads(text)
    except json.JSONDecodeError as error:
        # Claude Code ignores a settings file that is not JSON (comments included), in silence.
        raise SettingsFileError(
            f"{path} is not JSON, as Claude Code needs it ({error}); fix it, then try again"
        ) from None
    if not isinstance(found, dict):
        raise SettingsFileError(f"{path} holds {type(found).__name__}, not a JSON object")
    if not isinstance(found.get("hooks", {}), dict):
        raise SettingsFileError(f"{path}: 'hooks' is not a JSON object")
    return found


def write(path: Path, settings: dict[str, Any]) -> None:
    """Write `settings` to `path` whole or not at all (a new file next to it, then renamed),
    keeping the file's permissions, and the file a symbolic link names (settings kept with
    one's dotfiles); its folder is made when missing."""
    path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(settings, indent=2, ensure_ascii=False) + "\n"
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(name, path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask())
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


__all__ = ["SettingsFileError", "installed", "is_ours", "read", "uninstalled", "write"]
