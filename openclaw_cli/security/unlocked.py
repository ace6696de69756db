"""The data keys this process holds, by home, and how it gets one the first time it needs it.

Threading the key through every function that opens a file would touch most of the code base; instead
the one database opener (database.py) and the one file codec (records.py) ask here for the key of the
home a path is in. The key comes on first need from the key agent (`security unlock`, agent.py) if one
holds it, else is unwrapped with a passphrase from the provider the CLI edge or the gateway installed, then kept in memory only, for the life of the process. So a command that
only talks to a running gateway never asks for a passphrase: it opens nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from openclaw_cli.security.keyfile import PassphraseMissing, is_encrypted, key_path, read_keyfile, unwrap

# Gives the passphrase for the home at the given root, or raises PassphraseMissing.
PassphraseProvider = Callable[[Path], str]
# Gives the data key a key agent holds for the home at the given root (security unlock), or None.
AgentLookup = Callable[[Path], bytes | None]

_lock = threading.Lock()
_keys: dict[Path, bytes] = {}
_provider: PassphraseProvider | None = None
_agent: AgentLookup | None = None
_default_home: Path | None = None


def set_provider(provider: PassphraseProvider | None) -> None:
    global _provider
    _provider = provider


def set_agent(lookup: AgentLookup | None) -> None:
    """Where to ask for a key before asking for a passphrase (the CLI edge knows the agent's socket)."""
    global _agent
    _agent = lookup


def set_default_home(root: Path | None) -> None:
    """The home this process works for (the CLI's --home): a database outside every home that is not
    plain SQLite (a backup written with --output, a copy being restored) is opened with its key."""
    global _default_home
    _default_home = None if root is None else _norm(root)


def default_home() -> Path | None:
    return _default_home if _default_home is not None and is_encrypted(_default_home) else None


def remember(root: Path, key: bytes) -> None:
    """Hold `key` as the data key of the home at `root` (after init, or a gateway's unlock at start)."""
    with _lock:
        _keys[_norm(root)] = key


def forget(root: Path | None = None) -> None:
    """Drop the key of one home, or of all (decrypt, tests)."""
    with _lock:
        if root is None:
            _keys.clear()
        else:
            _keys.pop(_norm(root), None)


def _norm(root: Path) -> Path:
    return Path(root).absolute()


def home_of(path: Path) -> Path | None:
    """The encrypted home that holds `path`, or None (a plain home, or a file outside any home).

    A few stat calls per open, no cache: a home can be encrypted or decrypted by another process, and a
    database open costs milliseconds against these microseconds.
    """
    probe = _norm(path)
    for parent in probe.parents:
        if is_encrypted(parent):
            return parent
    return None


def key_for_home(root: Path) -> bytes:
    """The data key of the encrypted home at `root`, unwrapping it with the provider's passphrase once."""
    root = _norm(root)
    with _lock:
        known = _keys.get(root)
        if known is not None:
            return known
        lent = _agent(root) if _agent is not None else None
        if lent is not None:
            _keys[root] = lent
            return lent
        if _provider is None:
            raise PassphraseMissing(
                f"the home {root} is encrypted and this process has no passphrase for it",
                hint="set OPENCLAW_PASSPHRASE, run on a terminal, or store it in the OS keyring",
            )
        keyfile = read_keyfile(root)
        key = unwrap(keyfile, _provider(root))
        _keys[root] = key
        return key


def key_for(path: Path) -> bytes | None:
    """The data key for a file at `path`, or None when it is not in an encrypted home."""
    root = home_of(path)
    return None if root is None else key_for_home(root)


def describe_key_file(root: Path) -> Path:
    return key_path(root)
