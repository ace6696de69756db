"""What every `openclaw session` command module shares: the session store and manager of the chosen agent,
the local clock, the cached session settings, and the argument types.

A module of its own so that session.py (which registers the command modules) and the command modules
import it, and never each other.
"""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer

from openclaw_cli.cli import common

if TYPE_CHECKING:
    from openclaw_cli.sessions.lifecycle import SessionManager
    from openclaw_cli.sessions.store import SessionStore

JsonOpt = Annotated[bool, typer.Option("--json", help=common.JSON_HELP)]
Target = Annotated[
    str, typer.Argument(help="A session key (agent:main:...) or a session id (s-...).", show_default=False)
]
KeyArg = Annotated[str, typer.Argument(help="A session key, e.g. agent:main:main.", show_default=False)]


def epilog(*lines: str) -> str:
    """A command's --help epilog: the example command lines given."""
    return "Examples:\n\n" + "\n\n".join(f"  {line}" for line in lines)


def now() -> datetime:
    """Local time with the local zone's DST rules (the daily reset hour is local time).

    `datetime.now().astimezone()` carries only today's fixed UTC offset, which puts yesterday's reset
    hour one hour off on the day after a DST change; a ZoneInfo knows the offset of every date.
    """
    return datetime.now(_local_zone())


def _local_zone() -> Any:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    name = common.state().env.get("TZ", "").lstrip(":")
    try:
        if name:
            return ZoneInfo(name)
        with open("/etc/localtime", "rb") as handle:
            return ZoneInfo.from_file(handle, key="localtime")
    except (OSError, ValueError, ZoneInfoNotFoundError):
        return datetime.now().astimezone().tzinfo  # no zone data: today's offset is the best we have


def store(with_settings: bool = False) -> SessionStore:
    """The chosen agent's session store; `with_settings` writes with the configured durability."""
    from openclaw_cli.sessions.store import Durability, SessionStore

    st = common.state()
    durability = Durability.from_settings(st.settings.session) if with_settings else Durability()
    return SessionStore(st.home, st.agent, durability)


def manager() -> SessionManager:
    """The chosen agent's session manager, with the (cached) session settings."""
    from openclaw_cli.sessions.lifecycle import ResetPolicy, SessionManager
    from openclaw_cli.sessions.store import Durability, SessionStore

    st = common.state()
    values = session_values()
    durability = Durability(values["fsync"], values["fsyncIntervalMs"])
    policy = ResetPolicy(values["atHour"], values["idleMinutes"], values["dormantMinutes"])
    return SessionManager(SessionStore(st.home, st.agent, durability), policy)


_SETTINGS_CACHE = "session-settings.json"


def _identity_rules(settings: Any) -> dict[str, Any]:
    from openclaw_cli.identity.persons import IdentityRules

    return IdentityRules.of(settings).to_dict()


def session_values() -> dict[str, Any]:
    """The session settings an append needs, validated once per change of openclaw.json or OPENCLAW_*.

    Loading the settings (pydantic) costs ~0.25 s, more than the rest of an append, so the validated
    values are cached under cache/ keyed by a hash of the config file and the OPENCLAW_* variables.
    """
    import hashlib
    import json

    st = common.state()
    config = b""
    for name in ("openclaw.json", "openclaw.toml"):  # both: a second file added must not hit the cache
        with contextlib.suppress(OSError):
            config += name.encode() + st.home.root.joinpath(name).read_bytes()
    # Secrets are no settings: a fast hash of a passphrase written to disk would let anyone who reads the
    # home test guesses without scrypt; and a passphrase given to one run and not the next (a key agent)
    # must not make every other append reload the settings.
    overrides = sorted(
        (k.upper(), v)
        for k, v in st.env.items()
        if k.upper().startswith("OPENCLAW_") and not k.upper().endswith(("PASSPHRASE", "GATEWAY_TOKEN"))
    )
    stamp = hashlib.sha256(json.dumps([config.hex(), overrides]).encode()).hexdigest()
    path = st.home.cache_dir / _SETTINGS_CACHE
    try:
        cached = json.loads(path.read_bytes())
        found = cached["values"]
        # a cache written before the identity rules held the dmScope is stale (claims.py needs it)
        fresh = cached.get("key") == stamp and {"identity", "backupKeepDays", "mediaTtlDays"} <= found.keys()
        if fresh and "dmScope" in found["identity"]:
            return dict(found)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    session = st.settings.session  # validates; a bad config is reported as before and never cached
    values = {
        "fsync": session.fsync,
        "fsyncIntervalMs": session.fsync_interval_ms,
        "atHour": session.reset.at_hour,
        "idleMinutes": session.reset.idle_minutes,
        "dormantMinutes": session.dormant_minutes,
        "identity": _identity_rules(st.settings),  # whose words a user message is (identity.py)
        "backupKeepDays": st.settings.memory.backup.keep_days,  # the daily memory copies of `sweep`
        "mediaTtlDays": st.settings.media.ttl_days,  # channel media `sweep` deletes
    }
    from openclaw_cli.core.fsutil import atomic_write_json

    with contextlib.suppress(OSError):  # only a cache
        atomic_write_json(path, {"key": stamp, "values": values}, durable=False)
    return values


def warn_problems(problems: list[Any], path: Any) -> None:
    for problem in problems:
        common.warn(problem.describe(path))
