"""Where the gateway of a home says it runs, and whether it answers: its pid file (JSON: pid, host, port),
its log file, and the checks the CLI makes before it talks to it or works on files it owns.

Imports nothing of the gateway's stack (urllib only when it probes), so memory commands that must refuse
while a gateway runs, and `memory purge` that hands its work to one, can ask cheaply.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openclaw_cli.core.paths import Home


def pid_file(home: Home) -> Path:
    return home.root / "gateway" / "gateway.pid"


def log_file(home: Home) -> Path:
    return home.root / "gateway" / "gateway.log"


def read_pid_record(home: Home) -> dict[str, Any] | None:
    try:
        value = json.loads(pid_file(home).read_bytes())
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) and isinstance(value.get("pid"), int) else None


def process_alive(pid: int) -> bool:
    """Whether process `pid` runs. One that exited but was not yet reaped (a zombie) does not: a gateway
    started in the background is the child of init, and in a container init may reap late or never, so
    `gateway stop` waited for the reaping (1.5-2 s here) or for its whole timeout."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _exited(pid)


def _exited(pid: int) -> bool:
    """Whether /proc says `pid` is a zombie or gone (False where there is no /proc to ask)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return Path("/proc/self/stat").exists()
    except OSError:
        return False
    # "pid (name) state ...": the name may hold spaces and parentheses, the state follows the last ")".
    fields = stat.rpartition(")")[2].split()
    return bool(fields) and fields[0] in ("Z", "X")


def probe(host: str, port: int, path: str = "/healthz", timeout: float = 2.0) -> dict[str, Any] | None:
    """The JSON a health endpoint answers, or None when nothing answers."""
    import urllib.error
    import urllib.request

    target = "127.0.0.1" if host == "0.0.0.0" else host
    try:
        with urllib.request.urlopen(f"http://{target}:{port}{path}", timeout=timeout) as reply:
            value = json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        with contextlib.suppress(ValueError, OSError):
            value = json.loads(exc.read())
            return value if isinstance(value, dict) else None
        return None
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def gateway_process(home: Home) -> dict[str, Any] | None:
    """The pid record of this home's gateway when its process lives, answering or not: a gateway too busy
    to answer /healthz in time still holds its databases and its caches. A pid the system has since given
    to another program (its command line names no gateway, where /proc tells) is not one."""
    record = read_pid_record(home)
    if record is None or not process_alive(record["pid"]):
        return None
    try:
        argv = Path(f"/proc/{record['pid']}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return record  # no /proc here (or no permission): a live process named by the file counts
    return record if b"gateway" in argv else None


def home_gateway(home: Home) -> tuple[str, int] | None:
    """(host, port) its pid file gives for this home's gateway when that process lives, else None.

    This is the only way a home finds its gateway: never a default or configured port. Another home's
    gateway may listen there (issue 48: `gateway start` in one home made another's `status` say running
    and its `chat` fail with HTTP 401), and it holds another token and other memories."""
    record = gateway_process(home)
    if record is None:
        return None
    port = record.get("port")
    if not isinstance(port, int) or not 0 < port < 65536:
        return None
    return str(record.get("host", "127.0.0.1")), port


def running_gateway(home: Home) -> tuple[str, int] | None:
    """(host, port) of this home's gateway when it is up (its pid file names a live process that answers
    /healthz), else None."""
    found = home_gateway(home)  # the common case: no pid file, nothing probed
    return found if found is not None and probe(*found) is not None else None
