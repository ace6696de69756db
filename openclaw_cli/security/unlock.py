"""`security unlock` / `lock` and the unlock state `security status` shows: the key agent started,
refreshed, stopped, asked.

Why a small agent of its own and not the gateway: the gateway is optional (most CLI commands open the
home in-process, with no gateway running), it is a large process that talks to the network, models and
plugins, and `security init`/`decrypt` must run with it stopped. An agent that does one thing, listens
only on a private Unix socket and holds only the key, is the smaller thing to trust, and it is there for
the gateway's own start too (no passphrase typed when the home is unlocked).
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import openclaw_cli
from openclaw_cli.core.errors import StoreError
from openclaw_cli.security import agent, unlocked
from openclaw_cli.security.keyfile import KeyFile, is_encrypted, read_keyfile

_READY_TIMEOUT_SECONDS = 15.0


def _not_encrypted(root: Path) -> StoreError:
    return StoreError(
        f"the home {root} is not encrypted", hint="nothing to unlock; see `openclaw security status`"
    )


def _spawn(
    path: Path, key: bytes, keyfile: KeyFile, ttl: float, child_env: Mapping[str, str]
) -> dict[str, Any]:
    """Start the agent detached (its own session: it outlives this command) and hand it the key on a pipe."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "openclaw_cli.security.agent_server", str(path), repr(float(ttl))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
        env=dict(child_env),
        # This checkout's package, whatever the interpreter's own install points at.
        cwd=str(Path(openclaw_cli.__file__).resolve().parent.parent),
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps({"key": key.hex(), "check": agent.key_check(keyfile)}).encode() + b"\n")
        proc.stdin.close()
        ready, _, _ = select.select([proc.stdout], [], [], _READY_TIMEOUT_SECONDS)
        line = proc.stdout.readline().decode("utf-8", "replace").strip() if ready else ""
    finally:
        proc.stdout.close()
    if not line.startswith("ready "):
        proc.kill()
        raise StoreError(
            f"the key agent did not start ({line or 'no answer'})",
            hint="the home still works with a passphrase; see `openclaw doctor`",
        )
    return {"expires": float(line.split()[1]), "pid": proc.pid}


def unlock_home(root: Path, run_dir: Path, ttl: float, child_env: Mapping[str, str]) -> dict[str, Any]:
    """Hold the home's data key in an agent for `ttl` seconds (start one, or refresh the running one).

    The key comes as any process's does (unlocked.key_for_home: a running agent, else the passphrase),
    so unlocking again before the expiry only extends it."""
    if not is_encrypted(root):
        raise _not_encrypted(root)
    key = unlocked.key_for_home(root)
    keyfile = read_keyfile(root)
    path = agent.socket_path(agent.prepare_run_dir(run_dir), root)
    agent.check_socket_path(path)
    answer = agent.refresh(path, key, keyfile, ttl)
    started = answer is None
    if answer is None:
        answer = _spawn(path, key, keyfile, ttl, child_env)
    return {"home": str(root), "socket": str(path), "started": started, **answer}


def lock_home(root: Path, run_dir: Path) -> bool:
    """Make the home's agent forget the key and exit now; False when no agent was running."""
    return agent.lock(agent.socket_path(run_dir, root))


def unlock_state(root: Path, run_dir: Path) -> dict[str, Any] | None:
    """{"expires", "pid"} when an agent holds this home's current key, else None."""
    if not is_encrypted(root):
        return None
    return agent.agent_status(agent.socket_path(run_dir, root), read_keyfile(root))
