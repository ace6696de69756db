"""`openclaw doctor`: permissions, config and sessions checks on real homes, through the real CLI."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.core.findings import Finding
from openclaw_cli.core.paths import Home
from openclaw_cli.doctor.checks import check_config, check_permissions, has_errors, run_checks
from tests.conftest import Result, run_cli

KEY = "agent:main:main"


@pytest.fixture
def cli(cli_private_models):  # type: ignore[no-untyped-def]
    """doctor reads the model cache: this home's own, not the run's shared one."""
    return cli_private_models


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _doctor_json(cli: Any, *args: str, **kwargs: Any) -> tuple[Result, dict[str, Any]]:
    result = cli("doctor", "--json", *args, **kwargs)
    assert "Traceback" not in result.stderr, result.stderr
    return result, json.loads(result.stdout)  # the whole of stdout is one JSON document


def _non_ok(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["severity"] != "ok"]


def _errors(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["severity"] == "error"]


def _session(cli: Any, home: Path) -> Path:
    """Create one real session through the CLI; its directory."""
    created = cli("session", "append", KEY, "--role", "user", "hello", "--json")
    assert created.returncode == 0, created.stderr
    session_id = created.json()["sessionId"]
    return home / "agents" / "main" / "sessions" / session_id


# --- the whole report ------------------------------------------------------------------------------


def test_missing_home_is_healthy_and_stays_missing(cli, home: Path) -> None:
    result, report = _doctor_json(cli)
    assert result.returncode == 0
    assert report["ok"] is True
    assert _non_ok(report) == []
    permissions = [f for f in report["findings"] if f["check"] == "home.permissions"]
    assert permissions and "does not exist yet" in permissions[0]["message"]
    assert not home.exists()


def test_findings_have_the_documented_shape(cli) -> None:
    _, report = _doctor_json(cli)
    assert set(report) == {"ok", "findings", "persons"}
    for finding in report["findings"]:
        assert set(finding) == {"check", "severity", "message", "hint", "path", "fixed"}
        assert finding["severity"] in {"ok", "warning", "error"}


def test_home_written_by_the_cli_is_healthy(cli, home: Path) -> None:
    assert cli("config", "set", "session.dmScope", "per-peer").returncode == 0
    _session(cli, home)
    result, report = _doctor_json(cli)
    assert result.returncode == 0, report
    assert _non_ok(report) == []
    checks = {f["check"] for f in report["findings"]}
    assert {"home.permissions", "config", "sessions"} <= checks


def test_plain_report_is_readable(cli, home: Path) -> None:
    home.mkdir(mode=0o755)
    result = cli("doctor")
    assert result.returncode == 1
    assert "home.permissions" in result.stdout
    assert "mode 0755, expected 0700" in result.stdout
    assert "fix: run `openclaw doctor --fix`" in result.stdout
    assert "problems found: 1 error(s)" in result.stdout
    assert "Traceback" not in result.stderr


def test_plain_report_of_a_healthy_home(cli) -> None:
    result = cli("doctor")
    assert result.returncode == 0
    assert "healthy: 0 error(s), 0 warning(s), 0 fixed" in result.stdout


# --- permissions -----------------------------------------------------------------------------------


def _loosen(cli: Any, home: Path) -> tuple[Path, Path]:
    directory = _session(cli, home)
    messages = directory / "messages.jsonl"
    os.chmod(directory, 0o755)
    os.chmod(messages, 0o644)
    return directory, messages


def test_loose_permissions_are_errors_and_are_not_changed_without_fix(cli, home: Path) -> None:
    directory, messages = _loosen(cli, home)
    os.chmod(home, 0o770)
    result, report = _doctor_json(cli)
    assert result.returncode == 1
    assert report["ok"] is False
    bad = {f["path"]: f for f in _non_ok(report)}
    assert set(bad) == {str(home), str(directory), str(messages)}
    for finding in bad.values():
        assert finding["severity"] == "error" and finding["check"] == "home.permissions"
        assert finding["fixed"] is False and "doctor --fix" in finding["hint"]
    assert "mode 0644, expected 0600" in bad[str(messages)]["message"]
    assert (_mode(home), _mode(directory), _mode(messages)) == (0o770, 0o755, 0o644)


def test_fix_repairs_permissions_and_a_second_run_is_clean(cli, home: Path) -> None:
    directory, messages = _loosen(cli, home)
    result, report = _doctor_json(cli, "--fix")
    assert result.returncode == 0
    assert report["ok"] is True
    fixed = {f["path"] for f in report["findings"] if f["fixed"]}
    assert fixed == {str(directory), str(messages)}
    assert (_mode(directory), _mode(messages)) == (0o700, 0o600)
    again, report = _doctor_json(cli)
    assert again.returncode == 0 and _non_ok(report) == []


def test_fix_opens_a_locked_directory_and_checks_inside_it(cli, home: Path) -> None:
    inner = home / "agents" / "main" / "notes"
    inner.mkdir(parents=True, mode=0o700)
    (inner / "a.txt").write_text("x", encoding="utf-8")
    os.chmod(inner / "a.txt", 0o666)
    for path in (home, home / "agents", home / "agents" / "main"):
        os.chmod(path, 0o700)
    os.chmod(inner, 0o000)
    try:
        result, report = _doctor_json(cli, "--fix")
    finally:
        os.chmod(inner, 0o700)  # let pytest clean up even if the fix failed
    assert result.returncode == 0, report
    assert {f["path"] for f in report["findings"] if f["fixed"]} == {str(inner), str(inner / "a.txt")}
    assert _mode(inner / "a.txt") == 0o600


def test_symlinks_are_neither_followed_nor_changed(cli, home: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("not ours", encoding="utf-8")
    os.chmod(outside, 0o644)
    outside_dir = tmp_path / "outside-dir"
    outside_dir.mkdir(mode=0o755)
    os.chmod(outside_dir, 0o755)
    home.mkdir(mode=0o700)
    (home / "link.txt").symlink_to(outside)
    (home / "link-dir").symlink_to(outside_dir, target_is_directory=True)
    result, report = _doctor_json(cli, "--fix")
    assert result.returncode == 0, report
    assert _non_ok(report) == []
    assert _mode(outside) == 0o644 and _mode(outside_dir) == 0o755


def test_home_that_is_a_file(cli, home: Path) -> None:
    home.parent.mkdir(parents=True, exist_ok=True)
    home.write_text("oops", encoding="utf-8")
    report = check_permissions(Home(home), fix=True)
    assert [(f.severity, f.fixed) for f in report] == [("error", False)]
    assert "is not a directory" in report[0].message


# --- config ----------------------------------------------------------------------------------------


def test_invalid_json5_config_is_an_error_naming_the_file_and_is_kept(cli, home: Path) -> None:
    home.mkdir(mode=0o700)
    config = home / "openclaw.json"
    config.write_text("{session: ", encoding="utf-8")
    os.chmod(config, 0o600)
    result, report = _doctor_json(cli, "--fix")
    assert result.returncode == 1
    [problem] = _errors(report)
    assert problem["check"] == "config" and problem["severity"] == "error"
    assert str(config) in problem["message"] and "invalid JSON5" in problem["message"]
    assert problem["path"] == str(config) and problem["hint"]
    assert config.read_text(encoding="utf-8") == "{session: "


def test_invalid_config_value_names_the_key_and_the_reason(cli, home: Path) -> None:
    home.mkdir(mode=0o700)
    config = home / "openclaw.json"
    config.write_text('{"session": {"reset": {"atHour": 25}}}', encoding="utf-8")
    os.chmod(config, 0o600)
    result, report = _doctor_json(cli)
    assert result.returncode == 1
    [problem] = _errors(report)
    assert "session.reset.atHour" in problem["message"]
    assert "less than or equal to 23" in problem["message"]


def test_invalid_environment_override_is_reported(cli) -> None:
    result, report = _doctor_json(cli, env={"OPENCLAW_SESSION__FSYNC": "sometimes"})
    assert result.returncode == 1
    [problem] = _errors(report)
    assert problem["check"] == "config"
    assert "session.fsync" in problem["message"] and "environment" in problem["message"]


def test_memory_is_not_checked_with_an_invalid_config(cli) -> None:
    _, report = _doctor_json(cli, env={"OPENCLAW_MEMORY__SEARCH__CANDIDATES": "0"})
    memory = [f for f in report["findings"] if f["check"].startswith("memory")]
    assert [(f["check"], f["severity"]) for f in memory] == [("memory", "warning")]
    assert "configuration is invalid" in memory[0]["message"]


def test_check_config_returns_settings_when_valid(tmp_path: Path) -> None:
    home = Home(tmp_path / "h")
    settings, findings = check_config(home, {"OPENCLAW_SESSION__DMSCOPE": "per-peer"})
    assert settings is not None and settings.session.dm_scope == "per-peer"
    assert [f.severity for f in findings] == ["ok"]


# --- sessions (checked by openclaw_cli.sessions.upkeep.check, run through doctor) -----------------------


def test_torn_last_line_is_a_warning_and_exit_stays_0(cli, home: Path) -> None:
    directory = _session(cli, home)
    messages = directory / "messages.jsonl"
    before = messages.read_bytes() + b'{"role": "user", "cont'
    messages.write_bytes(before)
    result, report = _doctor_json(cli, "--fix")
    assert result.returncode == 0
    assert report["ok"] is True
    [warning] = _non_ok(report)
    assert warning["check"] == "sessions.torn-line" and warning["severity"] == "warning"
    assert messages.read_bytes() == before  # append-only: never rewritten
    assert cli("doctor").returncode == 0


def test_damaged_session_index_is_an_error_that_fix_repairs(cli, home: Path) -> None:
    _session(cli, home)
    index = home / "agents" / "main" / "sessions" / "sessions.json"
    index.write_text("{not json", encoding="utf-8")
    result, report = _doctor_json(cli)
    assert result.returncode == 1
    assert any(f["check"].startswith("sessions") and f["severity"] == "error" for f in report["findings"])
    fixed, report = _doctor_json(cli, "--fix")
    assert fixed.returncode == 0, report
    clean, report = _doctor_json(cli)
    assert clean.returncode == 0 and _non_ok(report) == []
    assert KEY in json.loads(index.read_text(encoding="utf-8"))["sessions"]


def test_agent_option_selects_whose_sessions_are_checked(cli, home: Path) -> None:
    _session(cli, home)
    result, report = _doctor_json(cli, env={"OPENCLAW_AGENT": "other"})
    assert result.returncode == 0
    sessions = [f for f in report["findings"] if f["check"] == "sessions"]
    assert sessions and "agent other" in sessions[0]["message"]


# --- the core function -----------------------------------------------------------------------------


def test_run_checks_reports_and_fixes_through_the_core_api(tmp_path: Path) -> None:
    home = Home(tmp_path / "h")
    home.ensure_root()
    loose = home.root / "stray.txt"
    loose.write_text("x", encoding="utf-8")
    os.chmod(loose, 0o640)
    found = run_checks(home, "main", {}, fix=False)
    assert has_errors(found)
    assert [f.path for f in found if f.severity == "error"] == [str(loose)]
    repaired = run_checks(home, "main", {}, fix=True)
    assert not has_errors(repaired)
    assert _mode(loose) == 0o600


def test_has_errors_ignores_warnings_and_fixed_errors() -> None:
    assert not has_errors([Finding("x", "warning", "w"), Finding("x", "error", "e", fixed=True)])
    assert has_errors([Finding("x", "ok", "fine"), Finding("x", "error", "e")])


# --- memory (checked by openclaw_cli.memory.checks, run through doctor) ---------------------------


def test_memory_database_is_checked_when_config_is_valid(cli, home: Path) -> None:
    added = run_cli(home, "memory", "add", "I like green tea", "--json")  # the shared, converted models
    assert added.returncode == 0, added.stderr
    result, report = _doctor_json(cli)
    assert result.returncode == 0, report
    memory = [f for f in report["findings"] if f["check"].startswith("memory")]
    assert memory and all(f["severity"] == "ok" for f in memory)
    assert any(f["path"] == str(home / "agents" / "main" / "memory" / "memory.sqlite") for f in memory)
