"""`--quiet` / `-q` on the commands cron runs (issue 48): cron mails whatever a job prints, so a job that went
well prints nothing; what is wrong or changed is still said, and errors still go to stderr with exit 1."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import apsw
import pytest

from tests.conftest import Result, run_cli
from tests.home_copies import copy_home

KEY = "agent:main:main"


def _silent(result: Result) -> None:
    assert result.returncode == 0, result.stderr
    assert (result.stdout, result.stderr) == ("", "")


@pytest.fixture(scope="module")
def seeded_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with one memory, added once for the module by the real CLI."""
    home = tmp_path_factory.mktemp("cron-quiet") / "home"
    added = run_cli(home, "memory", "add", "Lin drinks green tea every morning", "-c", "preference")
    assert added.returncode == 0, added.stderr
    return home


@pytest.fixture
def seeded(seeded_once: Path, home: Path) -> Path:
    """This test's own copy of the seeded home (the tests break and repair its index, back it up)."""
    return copy_home(seeded_once, home)


def _break_keyword_index(home: Path) -> None:
    conn = apsw.Connection(str(home / "agents" / "main" / "memory" / "memory.sqlite"))
    try:
        conn.execute("DELETE FROM records_fts WHERE rowid = 1")
    finally:
        conn.close()


# -- memory index --check ---------------------------------------------------------------------------


def test_index_check_without_quiet_says_ok(cli, seeded: Path) -> None:  # type: ignore[no-untyped-def]
    checked = cli("memory", "index", "--check")
    assert checked.returncode == 0
    assert len(checked.stdout.splitlines()) == 2  # the report of the issue: two lines every run


@pytest.mark.parametrize("flag", ["--quiet", "-q"])
def test_index_check_quiet_prints_nothing_when_all_is_well(cli, seeded: Path, flag: str) -> None:  # type: ignore[no-untyped-def]
    _silent(cli("memory", "index", "--check", flag))


def test_index_check_quiet_still_says_what_is_wrong(cli, seeded: Path) -> None:  # type: ignore[no-untyped-def]
    _break_keyword_index(seeded)
    checked = cli("memory", "index", "--check", "--quiet")
    assert checked.returncode == 1
    lines = checked.stdout.splitlines()
    assert len(lines) == 1 and "memory.sqlite: " in lines[0] and "ok" not in lines[0].split(": ", 1)[1]


def test_index_repair_quiet_prints_nothing_when_nothing_needed_repair(cli, seeded: Path) -> None:  # type: ignore[no-untyped-def]
    _silent(cli("memory", "index", "--quiet"))


def test_index_repair_quiet_says_what_it_repaired(cli, seeded: Path) -> None:  # type: ignore[no-untyped-def]
    _break_keyword_index(seeded)
    repaired = cli("memory", "index", "--quiet")
    assert repaired.returncode == 0, repaired.stderr
    assert "fts added 1" in repaired.stdout and len(repaired.stdout.splitlines()) == 1


# -- session sweep ----------------------------------------------------------------------------------


def test_sweep_without_quiet_says_nothing_changed(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    swept = cli("session", "sweep")
    assert swept.returncode == 0 and swept.stdout == "0 session(s) changed\n"


@pytest.mark.parametrize("flag", ["--quiet", "-q"])
def test_sweep_quiet_prints_nothing_when_nothing_changed(cli, home: Path, flag: str) -> None:  # type: ignore[no-untyped-def]
    assert cli("session", "append", KEY, "--role", "user", "fresh").returncode == 0
    _silent(cli("session", "sweep", flag))


def test_sweep_quiet_says_what_changed(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    assert cli("session", "append", KEY, "--role", "user", "old news").returncode == 0
    # Three days old: meta.json's lastActiveAt and its message's time, which the meta is reconciled with.
    then = (datetime.now(UTC) - timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    [directory] = (home / "agents" / "main" / "sessions").glob("s-*")
    for name in ("meta.json", "messages.jsonl"):
        lines = (directory / name).read_text(encoding="utf-8").splitlines()
        if name == "meta.json":
            lines = [json.dumps({**json.loads("".join(lines)), "lastActiveAt": then})]
        else:
            lines = [json.dumps({**json.loads(line), "ts": then}) for line in lines]
        (directory / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    swept = cli("session", "sweep", "--quiet")
    assert swept.returncode == 0, swept.stderr
    assert "archived" in swept.stdout and swept.stdout.endswith("1 session(s) changed\n")


# -- memory backup, reflect -------------------------------------------------------------------------


def test_backup_quiet_prints_nothing_and_writes_the_copy(cli, seeded: Path) -> None:  # type: ignore[no-untyped-def]
    _silent(cli("memory", "backup", "--quiet"))
    copies = list((seeded / "agents" / "main" / "memory" / "backups").glob("manual-*.sqlite"))
    assert len(copies) == 1


def test_backup_quiet_still_fails_on_stderr(cli, seeded: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    failed = cli("memory", "backup", "-q", "-o", str(tmp_path))  # a directory: refused
    assert failed.returncode != 0
    assert failed.stdout == "" and failed.stderr.startswith("openclaw: error:")


# A model is configured (never called: nothing waits for reflection); TEST-NET-1 is never reached.
MODEL = {"OPENCLAW_LLM__MODEL": "openai/any", "OPENCLAW_LLM__APIBASE": "http://192.0.2.1/v1"}


@pytest.mark.parametrize("args", [("--if-due", "-q"), ("--quiet",)], ids=["if-due", "plain"])
def test_reflect_quiet_prints_nothing_when_nothing_waits(cli, home: Path, args: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    _silent(cli("reflect", *args, env=MODEL))


def test_reflect_without_quiet_says_nothing_to_do(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    shown = cli("reflect", env=MODEL)
    assert shown.returncode == 0 and shown.stdout.startswith("nothing to do")
