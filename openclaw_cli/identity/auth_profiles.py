"""Per-agent auth profiles (seed 003 §5.1, §7): API keys per provider in
`agents/<agentId>/agent/auth-profiles.json`, mode 0600, one file per agent (an agent never sees another's).

    {"version": 1, "profiles": {"openai": {"type": "api_key", "provider": "openai", "key": "...",
                                           "updatedAt": "2026-01-01T00:00:00+00:00"}}}

An agent's model calls use, in order: its `agents.list[]` entry's `apiKey`, then its profile for the
provider of its model (the model's prefix: `openai/gpt-4o-mini` -> `openai`), then `llm.apiKey`, then the
provider's environment variable (OPENAI_API_KEY...), which the model client reads itself.

A profile file that group or others may read or write (mode not 0600 or stricter) is refused, not fixed:
like ssh with a private key, the file may already have been read by someone else, so the user is told to
fix the mode and consider rotating the keys, rather than the key being used, or the mode changed, in
silence. `set` and `remove` replace the file atomically at 0600, under a lock so two edits never lose one.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import InvalidInput, NotFound, StoreError
from openclaw_cli.core.fsutil import FILE_MODE, atomic_write_json, ensure_private_dir

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Settings
    from openclaw_cli.core.paths import Home

FILENAME = "auth-profiles.json"
MAX_KEY_CHARS = 4096
_PROVIDER = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")


@dataclass(frozen=True)
class Profile:
    provider: str
    key: str
    updated_at: str | None

    def listed(self) -> dict[str, Any]:
        """What `auth list` shows: never the key."""
        return {"provider": self.provider, "type": "api_key", "updatedAt": self.updated_at}


def profiles_path(home: Home, agent_id: str) -> Path:
    return home.agent_dir(agent_id) / "agent" / FILENAME


def check_provider(name: str) -> str:
    provider = name.strip().lower()
    if not _PROVIDER.match(provider):
        raise InvalidInput(
            f"invalid provider {name!r}",
            hint="give the model prefix, such as openai or anthropic (letters, digits, '_', '.', '-')",
        )
    return provider


def check_key(key: str) -> str:
    """The key as given on stdin or at the prompt, without its line end; refused when it cannot be a key
    (empty, several lines, spaces or control characters: a pasted sentence, not a key). Never quoted back."""
    key = key.removesuffix("\n").removesuffix("\r")
    if not key:
        raise InvalidInput("no key given", hint="type it at the prompt, or give it on standard input")
    if len(key) > MAX_KEY_CHARS:
        raise InvalidInput(f"the key is longer than {MAX_KEY_CHARS} characters")
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in key):
        raise InvalidInput(
            "the key holds spaces, line breaks or control characters",
            hint="give the key alone, on one line",
        )
    return key


def _check_mode(path: Path, mode: int) -> None:
    if stat.S_IMODE(mode) & 0o077:
        raise StoreError(
            f"{path} has mode {stat.S_IMODE(mode):04o}: others may read its API keys, so it is not used",
            hint=f"run `chmod 600 {path}` (or `openclaw doctor --fix`), and rotate the keys if someone "
            "else could have read them",
        )


def read_profiles(path: Path) -> dict[str, Profile]:
    """The profiles in `path` ({} when there is no file); StoreError when it is unsafe or damaged."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise StoreError(f"{path}: cannot read ({exc.strerror})", hint="check the file's owner") from exc
    try:
        _check_mode(path, os.fstat(fd).st_mode)  # the mode of the file read, not of a name swapped since
        with os.fdopen(fd, "rb") as handle:
            fd = -1
            data = json.loads(handle.read())
    except ValueError as exc:
        raise StoreError(
            f"{path}: not valid JSON", hint="fix it, or remove it and set the keys again"
        ) from exc
    finally:
        if fd >= 0:
            os.close(fd)
    found: dict[str, Profile] = {}
    entries = data.get("profiles") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        raise StoreError(f'{path}: no "profiles" object', hint="remove it and set the keys again")
    for provider, entry in entries.items():
        if isinstance(entry, dict) and isinstance(entry.get("key"), str) and _PROVIDER.match(provider):
            updated = entry.get("updatedAt")
            found[provider] = Profile(provider, entry["key"], updated if isinstance(updated, str) else None)
    return found


def _write(path: Path, profiles: dict[str, Profile]) -> None:
    body = {
        name: {"type": "api_key", "provider": name, "key": p.key, "updatedAt": p.updated_at}
        for name, p in sorted(profiles.items())
    }
    atomic_write_json(path, {"version": 1, "profiles": body})  # a new file, mode 0600


def _edit_lock(path: Path) -> Any:
    import filelock

    ensure_private_dir(path.parent)
    return filelock.FileLock(str(path) + ".lock", timeout=30, mode=FILE_MODE, thread_local=False)


def set_key(home: Home, agent_id: str, provider: str, key: str, now: datetime) -> Path:
    """Store `key` as the agent's key for `provider`; the file it went to."""
    provider, key = check_provider(provider), check_key(key)
    path = profiles_path(home, agent_id)
    home.ensure(path.parent)
    with _edit_lock(path):
        profiles = read_profiles(path)
        profiles[provider] = Profile(provider, key, now.isoformat())
        _write(path, profiles)
    return path


def remove_key(home: Home, agent_id: str, provider: str) -> Path:
    provider = check_provider(provider)
    path = profiles_path(home, agent_id)
    if not path.exists():
        raise NotFound(f"agent {agent_id} has no key for {provider}", hint="see `openclaw auth list`")
    with _edit_lock(path):
        profiles = read_profiles(path)
        if profiles.pop(provider, None) is None:
            raise NotFound(f"agent {agent_id} has no key for {provider}", hint="see `openclaw auth list`")
        _write(path, profiles)
    return path


def profile_signature(home: Home, agent_id: str) -> tuple[int, int, int, int] | None:
    """What changes when the agent's profile file does (its mode too: a chmod must be seen): a process
    that keeps an agent's settings builds them again when this differs (agent/runtime.py)."""
    try:
        found = profiles_path(home, agent_id).stat()
    except OSError:
        return None
    return (found.st_mtime_ns, found.st_size, found.st_ino, found.st_mode)


def provider_of(model: str | None) -> str | None:
    """The provider a model name is served by: its prefix (`openai/gpt-4o-mini` -> openai)."""
    if not model or "/" not in model:
        return None
    prefix = model.split("/", 1)[0].lower()
    return prefix if _PROVIDER.match(prefix) else None


def with_auth_profile(settings: Settings, home: Home, agent_id: str) -> Settings:
    """`settings` (already `for_agent`'s) with the agent's profile key for its model's provider as
    `llm.apiKey`, unless its agents.list entry gives its own key. Unchanged when there is no profile."""
    from openclaw_cli.identity.agent_config import agent_entry

    entry = agent_entry(settings, agent_id)
    provider = provider_of(settings.llm.model)
    if provider is None or (entry is not None and entry.api_key):
        return settings
    found = read_profiles(profiles_path(home, agent_id)).get(provider)
    if found is None:
        return settings
    return settings.model_copy(update={"llm": settings.llm.model_copy(update={"api_key": found.key})})
