"""An encrypted home served by a gateway: the byte-grep of issue 52, with the gateway running and stopped.

A marker said in chat (and the model's reply naming it), one added with `memory add`, written to the
transcript, the transcript index, a backup and the gateway's inbox journal is found in no file under the
home, -wal files included. Reads through the running gateway need no passphrase.
"""

from __future__ import annotations

from pathlib import Path

from openclaw_cli.security import convert, unlocked
from tests.conftest import run_cli
from tests.gateway_helpers import echo_server, running_gateway, send_all, write_config

PASS = "gateway passphrase"
MARKERS = (b"MARKERCHAT", b"MARKERADD")


def holding_markers(root: Path) -> list[str]:
    """Files holding a marker, but the workspace Markdown: it stays plain by design (seed 003 §8, the
    user edits it with any editor), and "remember ..." from the owner is written to today's log there."""
    return sorted(
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file()
        and "workspace" not in path.relative_to(root).parts
        and any(marker in path.read_bytes() for marker in MARKERS)
    )


def test_nothing_said_or_added_is_readable_on_disk_with_the_gateway_running_or_stopped(home: Path) -> None:
    convert.init_home(home, PASS, kdf_n=2**14)  # a cheap scrypt: each process below unwraps with it
    unlocked.forget()
    env = {"OPENCLAW_PASSPHRASE": PASS}
    with echo_server() as fake:
        write_config(home, fake, memory={"extraction": {"enabled": False}})
        with running_gateway(home, env=env) as gateway:
            with gateway.ws() as conn:
                acks, events = send_all(conn, ["remember MARKERCHAT please"], "agent:main:main")
            assert events[-1]["state"] == "final" and "MARKERCHAT" in events[-1]["text"]
            added = run_cli(home, "memory", "add", "MARKERADD tea at four", env=env)
            assert added.returncode == 0, added.stderr
            # A read through the running gateway: no passphrase in this process's environment.
            found = run_cli(home, "memory", "search", "tea", "--json")
            assert found.returncode == 0 and "MARKERADD" in found.stdout, found.stderr
            said = run_cli(home, "session", "search", "MARKERCHAT", env=env)
            assert said.returncode == 0 and "MARKERCHAT" in said.stdout, said.stderr
            assert run_cli(home, "memory", "backup", env=env).returncode == 0
            assert list(home.rglob("*-wal")), "the test must look at live WAL files"
            assert holding_markers(home) == []
            logs = list((home / "agents" / "main" / "workspace").rglob("*.md"))
            assert all(b"MARKERADD" not in log.read_bytes() for log in logs)  # only what was said to remember
            refused = run_cli(home, "security", "decrypt", "--yes", env=env)  # it would race the gateway
            assert refused.returncode == 1 and "gateway of this home is running" in refused.stderr
        assert holding_markers(home) == []
    shown = run_cli(home, "session", "show", "agent:main:main", env=env)
    assert "MARKERCHAT" in shown.stdout  # and it is all still there
