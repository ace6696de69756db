"""The table machinery of the bad-input tests: a case, what it runs, and proof that nothing changed."""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Result, run_cli

KEY = "agent:main:main"


@dataclass
class Case:
    id: str
    args: tuple[str, ...]
    code: int
    files: dict[str, str] = field(default_factory=dict)  # written under tmp; "{tmp}" in args points there
    env: dict[str, str] = field(default_factory=dict)
    config: str | None = None  # openclaw.json for this case
    says: tuple[str, ...] = ()  # the error line names these
    never: tuple[str, ...] = ()  # ...and not these
    input: bytes | None = None  # standard input

    def param(self) -> Any:
        return pytest.param(self, id=self.id)


def seed_home(home: Path) -> Path:
    """A home with a memory and a session (the embedding model is prepared once for the table)."""
    assert run_cli(home, "memory", "add", "prefers green tea", "-c", "preference").returncode == 0
    assert run_cli(home, "session", "append", KEY, "--role", "user", "hello").returncode == 0
    return home


def snapshot(home: Path) -> dict[str, Any]:
    """What is stored: every file's hash, and the rows of each memory database (its WAL included)."""
    state: dict[str, Any] = {}
    for path in sorted(home.rglob("*")):
        relative = str(path.relative_to(home))
        if (
            relative.startswith("cache")
            or not path.is_file()
            or path.name.endswith(("-wal", "-shm", ".lock"))
        ):
            continue
        if path.suffix == ".sqlite":
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
                state[relative] = [
                    conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in ("records", "history")
                ]
        else:
            state[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return state


def assert_one_error_line(result: Result, code: int) -> str:
    assert result.returncode == code, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("openclaw: error: "), result.stderr
    return lines[0]


def run_case(case: Case, home: Path, tmp_path: Path) -> Result:
    for name, text in case.files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    args = [arg.replace("{tmp}", str(tmp_path)) for arg in case.args]
    return run_cli(home, *args, env=case.env, input=case.input)


def check_case(case: Case, home: Path, tmp_path: Path) -> None:
    """Run `case` against `home`: one error line naming what it should, no output, nothing changed."""
    config_file = home / "openclaw.json"
    if case.config is not None:
        config_file.write_text(case.config, encoding="utf-8")
    try:
        before = snapshot(home)
        result = run_case(case, home, tmp_path)
        line = assert_one_error_line(result, case.code)
        for text in case.says:
            assert text in line, line
        for text in case.never:
            assert text not in line, line
        assert result.stdout == ""
        assert snapshot(home) == before
    finally:
        if case.config is not None:
            config_file.unlink(missing_ok=True)
