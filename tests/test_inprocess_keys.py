"""tests/inprocess.py runs CLI commands inside the test worker: a command on an encrypted home must leave
no key state behind, as its process's end would. Left behind, a later module in the same worker wrote a
plain home's database with the earlier home's key (the Control UI's gateway then found it "not a SQLite
database")."""

from __future__ import annotations

from pathlib import Path

from openclaw_cli.security import unlocked
from tests import encrypted_homes
from tests.inprocess import run_in_process


def test_a_command_on_an_encrypted_home_leaves_no_key_state_behind(tmp_path: Path) -> None:
    home = encrypted_homes.prepare(tmp_path / "home", "encrypted")
    provider_before = unlocked._provider
    unlocked.forget()
    added = run_in_process(home, "memory", "add", "the boiler is serviced in March")
    assert added.returncode == 0, added.stderr
    assert unlocked.default_home() is None
    assert unlocked._keys == {}
    assert unlocked._provider is provider_before  # the test's own provider is put back

    plain = tmp_path / "plain" / "agents" / "main" / "memory" / "memory.sqlite"
    assert unlocked.key_for(plain) is None
