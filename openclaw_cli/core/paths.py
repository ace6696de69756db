"""The on-disk layout of an openclaw home, and validation of every name that becomes a path."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.core.fsutil import ensure_private_dir

MAX_NAME_LENGTH = 128
SHARED_AGENT = "_shared"
CONFIG_FILENAME = "openclaw.json"
CONFIG_TOML_FILENAME = "openclaw.toml"  # read when there is no openclaw.json (config_toml.py)
HOME_HINT = "set --home or OPENCLAW_HOME to a directory you can create and write"
_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


class ReservedName(InvalidInput):
    """A name openclaw keeps for itself (a usage error: exit status 2)."""

    exit_code = 2


def validate_name(value: str, what: str = "name") -> str:
    """Return `value` if it is safe as one path component, else raise InvalidInput.

    Safe means: 1..128 characters of letters, digits, `_`, `.`, `-`, not starting with `.` or `-`,
    so no `/`, no `..`, no NUL and nothing hidden.
    """
    if not value:
        raise InvalidInput(f"{what} is empty", hint=f"give a {what} of letters, digits, '_', '.' or '-'")
    if len(value) > MAX_NAME_LENGTH:
        raise InvalidInput(f"{what} is longer than {MAX_NAME_LENGTH} characters")
    if "\x00" in value or "/" in value or "\\" in value or ".." in value or not _NAME_RE.match(value):
        raise InvalidInput(
            f"invalid {what} {value!r}",
            hint="use letters, digits, '_', '.' and '-' only (no '/', '..' or NUL)",
        )
    return value


def validate_agent_id(value: str) -> str:
    """The canonical (lower-case) form of an agent id given by a user.

    Agent ids name directories, and `Main` and `main` must not become two agents on a case-sensitive
    file system, so ids are lower-cased. Names starting with `_` are reserved for openclaw itself
    (`_shared` holds the memories every agent sees) and refused with ReservedName.
    """
    validate_name(value, "agent id")
    if value.startswith("_"):
        raise ReservedName(
            f"agent id {value!r} is reserved (names starting with '_' are openclaw's own)",
            hint="choose an agent id that starts with a letter or digit",
        )
    return value.lower()


def user_cache_root(env: Mapping[str, str], platform: str = sys.platform) -> Path | None:
    """openclaw's directory in the user's cache by platform convention, from the environment the CLI
    was started with (None when it names no home directory): $XDG_CACHE_HOME/openclaw, else
    ~/Library/Caches/openclaw on macOS, %LOCALAPPDATA%\\openclaw\\cache on Windows, ~/.cache/openclaw.
    A relative XDG_CACHE_HOME is ignored, as the XDG spec says: it would move with the working directory."""
    xdg = env.get("XDG_CACHE_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "openclaw"
    if platform == "win32" and env.get("LOCALAPPDATA"):
        return Path(env["LOCALAPPDATA"]) / "openclaw" / "cache"
    user_home = env.get("HOME", "")
    if not user_home or not Path(user_home).is_absolute():
        return None
    if platform == "darwin":
        return Path(user_home) / "Library" / "Caches" / "openclaw"
    return Path(user_home) / ".cache" / "openclaw"


@dataclass(frozen=True)
class Home:
    """Paths inside $OPENCLAW_HOME. Creating directories is explicit (`ensure_*`).

    `user_cache` is openclaw's directory in the user's cache (user_cache_root), shared by every home of
    the user: the converted models live there, so a second home pays no conversion. None (a Home made
    without the CLI's environment) keeps them in the home."""

    root: Path
    user_cache: Path | None = None

    @property
    def config_file(self) -> Path:
        """openclaw.json, or openclaw.toml when only that exists (both at once: config.read_config_file
        refuses them); openclaw.json, which `config set` creates, when there is neither."""
        json_file = self.root / CONFIG_FILENAME
        toml_file = self.root / CONFIG_TOML_FILENAME
        return toml_file if not json_file.exists() and toml_file.exists() else json_file

    def agent_dir(self, agent_id: str) -> Path:
        if agent_id != SHARED_AGENT:
            validate_name(agent_id, "agent id")
        return self.root / "agents" / agent_id

    def sessions_dir(self, agent_id: str) -> Path:
        return self.agent_dir(agent_id) / "sessions"

    def session_dir(self, agent_id: str, session_id: str) -> Path:
        return self.sessions_dir(agent_id) / validate_name(session_id, "session id")

    def memory_dir(self, agent_id: str) -> Path:
        return self.agent_dir(agent_id) / "memory"

    def memory_db(self, agent_id: str) -> Path:
        return self.memory_dir(agent_id) / "memory.sqlite"

    def memory_db_agent(self, path: Path) -> str:
        """The agent (or SHARED_AGENT) whose memory database `path` is: a server store's name."""
        agent = path.parent.parent.name
        if self.memory_db(agent) != path:
            raise ValueError(f"{path} is not a memory database of this home")
        return agent

    def workspace_dir(self, agent_id: str) -> Path:
        return self.agent_dir(agent_id) / "workspace"

    @property
    def cache_dir(self) -> Path:
        """Files derived from packaged data, safe to delete (model conversions, jieba's dictionary cache,
        words' vectors)."""
        return self.root / "cache"

    @property
    def word_cache_dir(self) -> Path:
        """Single words' vectors searches met (memory/embedding/word_table.py): words of this home's
        memories, so kept here even when the model cache is shared, and emptied by every purge."""
        return self.cache_dir / "words"

    @property
    def model_cache_dir(self) -> Path:
        """Derived model files (the int8-compute conversions of the packaged embedding models, jieba's
        dictionary cache): the user's cache shared by every home, else the home's own."""
        return self.user_cache / "models" if self.user_cache is not None else self.home_model_cache_dir

    @property
    def home_model_cache_dir(self) -> Path:
        """The home's own model cache: where models are converted without a user cache, and where earlier
        versions converted them (`doctor` still looks there for an interrupted conversion's leftovers)."""
        return self.cache_dir / "models"

    def ensure_root(self) -> Path:
        return ensure_private_dir(self.root)

    def ensure(self, path: Path) -> Path:
        """Create `path` as a private directory, and every level between it and the root."""
        self.ensure_root()
        return ensure_private_dir(path)
