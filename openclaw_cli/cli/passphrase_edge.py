"""The CLI's edge for encrypted homes: where a passphrase may come from, read here and nowhere deeper.

`install` gives the process a provider that core code calls (security/unlocked.py) the first time it
opens a file of an encrypted home; a command that only talks to a running gateway never calls it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from openclaw_cli.core.errors import InvalidInput

if TYPE_CHECKING:
    from openclaw_cli.config.models import SecuritySettings
from openclaw_cli.security import unlocked
from openclaw_cli.security.keyfile import PassphraseMissing
from openclaw_cli.security.passphrase import ENV_NAME, SOURCES, Sources, keyring_getter, obtain

NEW_ENV_NAME = "OPENCLAW_NEW_PASSPHRASE"


def _terminal_prompt() -> Callable[[str], str] | None:
    """getpass when someone is at a terminal; None under cron, a pipe or a test (never blocks)."""
    if not sys.stdin.isatty():
        return None
    import getpass  # here: it imports termios and friends, which a plain home's start-up never needs

    return getpass.getpass


def _keyring_get(service: str, name: str) -> str | None:
    """The OS keyring, imported only when it is asked (its import costs ~0.1-0.5 s)."""
    getter = keyring_getter()
    return None if getter is None else getter(service, name)


def sources(env: Mapping[str, str], order: list[str] | None = None) -> Sources:
    chosen = list(order or SOURCES)
    return Sources(
        order=chosen,
        env_value=env.get(ENV_NAME) or None,
        prompt=_terminal_prompt(),
        keyring_get=_keyring_get if "keyring" in chosen else None,
    )


def _configures_sources(root: Path, env: Mapping[str, str]) -> bool:
    """Whether security.passphraseSources may be set (openclaw.json names it, or an OPENCLAW_SECURITY
    variable): otherwise the default order holds, and a command that needs no settings (`session append`)
    does not load them (~0.2-0.9 s of pydantic) only to learn that."""
    if any(name.upper().startswith("OPENCLAW_SECURITY") for name in env):
        return True
    for name in ("openclaw.json", "openclaw.toml"):
        try:
            if b"passphrase" in (root / name).read_bytes().lower():
                return True
        except OSError:
            continue
    return False


def install(
    env: Mapping[str, str], settings_of: Callable[[], SecuritySettings], home: Path | None = None
) -> None:
    """Let core code ask for the passphrase of an encrypted home (the order from security.passphraseSources,
    read only then: a plain home never loads the settings for it), and whether to seal workspace notes."""

    def provide(root: Path) -> str:
        order: list[str] | None = (
            list(settings_of().passphrase_sources) if _configures_sources(root, env) else None
        )
        return obtain(root, sources(env, order))

    def from_agent(root: Path) -> bytes | None:
        from openclaw_cli.security.agent import key_from_agent  # socket & co: only for an encrypted home

        return key_from_agent(run_dir(env, root), root)

    def seal_workspace() -> bool:  # asked only when a workspace file of an encrypted home is written
        return settings_of().encrypt_workspace

    from openclaw_cli.security import workspace_file

    workspace_file.set_policy(seal_workspace)
    unlocked.set_provider(provide)
    unlocked.set_agent(from_agent)
    unlocked.set_default_home(home)


def run_dir(env: Mapping[str, str], root: Path) -> Path:
    """The key agents' socket directory: $XDG_RUNTIME_DIR/openclaw, else the home's run/ (agent.py)."""
    from openclaw_cli.security.agent import runtime_dir

    return runtime_dir(env.get("XDG_RUNTIME_DIR") or None, root)


def agent_env(env: Mapping[str, str]) -> dict[str, str]:
    """The key agent's environment: this one without any passphrase (the agent gets the key on a pipe)."""
    return {k: v for k, v in env.items() if "PASSPHRASE" not in k.upper()}


def new_passphrase(env: Mapping[str, str], root: Path, *, also_current: bool = False) -> str:
    """A passphrase being set (init, rekey): OPENCLAW_NEW_PASSPHRASE (or, for init, OPENCLAW_PASSPHRASE),
    else typed twice on a terminal."""
    given = env.get(NEW_ENV_NAME) or (env.get(ENV_NAME) if also_current else None) or None
    if given:
        return given
    prompt = _terminal_prompt()
    if prompt is None:
        raise PassphraseMissing(
            f"no new passphrase for {root}: not on a terminal and {NEW_ENV_NAME} is not set",
            hint=f"set {NEW_ENV_NAME} (or {ENV_NAME} for init), or run it on a terminal",
        )
    first = prompt(f"new passphrase for {root}: ")
    if not first:
        raise InvalidInput("the passphrase is empty", hint="type a passphrase; nothing was changed")
    if prompt("the same again: ") != first:
        raise InvalidInput("the two passphrases differ", hint="nothing was changed; run it again")
    return first


def unlock_at_start(root: Path, env: Mapping[str, str], order: list[str]) -> str | None:
    """For the gateway: ask for an encrypted home's passphrase once, before serving, and hold the key.

    Returns the passphrase (for `gateway start` to hand to its background process through the
    environment, never argv), or None for a plain home or one the key agent holds the key of."""
    from openclaw_cli.security.agent import key_from_agent
    from openclaw_cli.security.keyfile import is_encrypted, read_keyfile, unwrap

    if not is_encrypted(root):
        return None
    lent = key_from_agent(run_dir(env, root), root)
    if lent is not None:  # `security unlock`ed: a background gateway asks the agent the same way
        unlocked.remember(root, lent)
        return None
    passphrase = obtain(root, sources(env, order))
    unlocked.remember(root, unwrap(read_keyfile(root), passphrase))
    return passphrase
