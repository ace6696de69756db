"""The CLI's edge for encrypted homes: where a passphrase may come from, read here and nowhere deeper.

`install` gives the process a provider that core code calls (security/unlocked.py) the first time it
opens a file of an encrypted home; a command that only talks to a running gateway never calls it.
"""

from __future__ import annotations

import getpass
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from openclaw_cli.errors import InvalidInput
from openclaw_cli.security import unlocked
from openclaw_cli.security.keyfile import PassphraseMissing
from openclaw_cli.security.passphrase import ENV_NAME, SOURCES, Sources, keyring_getter, obtain

NEW_ENV_NAME = "OPENCLAW_NEW_PASSPHRASE"


def _terminal_prompt() -> Callable[[str], str] | None:
    """getpass when someone is at a terminal; None under cron, a pipe or a test (never blocks)."""
    return getpass.getpass if sys.stdin.isatty() else None


def sources(env: Mapping[str, str], order: list[str] | None = None) -> Sources:
    chosen = list(order or SOURCES)
    return Sources(
        order=chosen,
        env_value=env.get(ENV_NAME) or None,
        prompt=_terminal_prompt(),
        keyring_get=keyring_getter() if "keyring" in chosen else None,
    )


def install(env: Mapping[str, str], configured: Callable[[], list[str]], home: Path | None = None) -> None:
    """Let core code ask for the passphrase of an encrypted home (the order from security.passphraseSources,
    read only then: a plain home never loads the settings for it)."""

    def provide(root: Path) -> str:
        return obtain(root, sources(env, configured()))

    unlocked.set_provider(provide)
    unlocked.set_default_home(home)


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
    environment, never argv), or None for a plain home."""
    from openclaw_cli.security.keyfile import is_encrypted, read_keyfile, unwrap

    if not is_encrypted(root):
        return None
    passphrase = obtain(root, sources(env, order))
    unlocked.remember(root, unwrap(read_keyfile(root), passphrase))
    return passphrase
