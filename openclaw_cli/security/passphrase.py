"""Where a passphrase comes from: OPENCLAW_PASSPHRASE, a prompt on a terminal, the OS keyring.

The sources are tried in the configured order (security.passphraseSources). Everything that touches the
process (the environment, the terminal, the keyring backend) is given by the caller, so this module reads
nothing itself; the CLI edge and `gateway run` build the inputs. The passphrase is returned, never
written or logged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from openclaw_cli.security.keyfile import PassphraseMissing

SOURCES = ("env", "prompt", "keyring")
KEYRING_SERVICE = "openclaw"
ENV_NAME = "OPENCLAW_PASSPHRASE"


@dataclass(frozen=True)
class Sources:
    order: Sequence[str]
    env_value: str | None  # OPENCLAW_PASSPHRASE as the edge read it
    prompt: Callable[[str], str] | None  # getpass-like, None when there is no terminal
    keyring_get: Callable[[str, str], str | None] | None  # keyring.get_password-like


def obtain(root: Path, sources: Sources, *, purpose: str = "passphrase") -> str:
    """The first passphrase the configured sources give for the home at `root`."""
    for source in sources.order:
        if source == "env" and sources.env_value:
            return sources.env_value
        if source == "prompt" and sources.prompt is not None:
            typed = sources.prompt(f"{purpose} for {root}: ")
            if typed:
                return typed
        if source == "keyring" and sources.keyring_get is not None:
            stored = _from_keyring(sources.keyring_get, root)
            if stored:
                return stored
    raise PassphraseMissing(
        f"the home {root} is encrypted and no {purpose} was given (tried: {', '.join(sources.order)})",
        hint=f"set {ENV_NAME}, run on a terminal to be asked, or store it with "
        f"`keyring set {KEYRING_SERVICE} {root}`",
    )


def _from_keyring(get: Callable[[str, str], str | None], root: Path) -> str | None:
    try:
        return get(KEYRING_SERVICE, str(root))
    except Exception:  # noqa: BLE001 - no backend, a locked keyring: a source that gives nothing
        return None


def keyring_getter() -> Callable[[str, str], str | None] | None:
    """keyring.get_password, or None when the package or a usable backend is missing."""
    try:
        import keyring
        from keyring.backends import fail
    except ImportError:
        return None
    if isinstance(keyring.get_keyring(), fail.Keyring):
        return None
    return keyring.get_password
