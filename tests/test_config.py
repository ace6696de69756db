"""`openclaw config path/show/get/set` through the real CLI: file, environment overrides, validation."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from tests.conftest import Result

CONFIG = "openclaw.json"


def _write_config(home: Path, text: str) -> Path:
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = home / CONFIG
    path.write_text(text, encoding="utf-8")
    return path


def _assert_one_line_error(result: Result, *needles: str) -> None:
    assert result.returncode == 1, result
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("openclaw: error: "), result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


# --- path and show ---------------------------------------------------------------------------------


def test_path_names_the_file_without_creating_anything(cli, home: Path) -> None:
    plain = cli("config", "path")
    assert plain.returncode == 0
    assert plain.stdout.strip() == str(home / CONFIG)
    as_json = cli("config", "path", "--json").json()
    assert as_json == {"path": str(home / CONFIG), "exists": False}
    assert not home.exists()


def test_path_reports_an_existing_file(cli, home: Path) -> None:
    _write_config(home, "{}")
    assert cli("config", "path", "--json").json()["exists"] is True


def test_show_without_a_file_prints_the_defaults(cli) -> None:
    result = cli("config", "show", "--json")
    assert result.returncode == 0, result.stderr
    values = result.json()
    assert values["session"]["dmScope"] == "main"
    assert values["session"]["reset"]["atHour"] == 4
    assert values["memory"]["embedding"]["provider"] == "local"


def test_show_plain_is_json_text_too(cli, home: Path) -> None:
    _write_config(home, '{"session": {"fsync": "always"}}')
    result = cli("config", "show")
    assert result.returncode == 0
    assert json.loads(result.stdout)["session"]["fsync"] == "always"


# --- get and the environment -----------------------------------------------------------------------


def test_get_reads_the_file(cli, home: Path) -> None:
    _write_config(home, '{"session": {"dmScope": "per-peer"}}')
    assert cli("config", "get", "session.dmScope").stdout.strip() == "per-peer"
    assert cli("config", "get", "session.dmScope", "--json").json() == {
        "key": "session.dmScope",
        "value": "per-peer",
    }


def test_get_of_a_section_prints_json(cli) -> None:
    result = cli("config", "get", "session.reset")
    assert result.returncode == 0
    assert json.loads(result.stdout) == {"atHour": 4, "idleMinutes": None}


def test_environment_override_wins_over_the_file(cli, home: Path) -> None:
    _write_config(home, '{"session": {"dmScope": "per-peer"}}')
    env = {"OPENCLAW_SESSION__DMSCOPE": "per-channel-peer"}
    assert cli("config", "get", "session.dmScope", env=env).stdout.strip() == "per-channel-peer"
    assert cli("config", "show", "--json", env=env).json()["session"]["dmScope"] == "per-channel-peer"
    # The override is not written anywhere: without it the file's value is back.
    assert cli("config", "get", "session.dmScope").stdout.strip() == "per-peer"


def test_environment_override_of_a_nested_number(cli) -> None:
    result = cli(
        "config", "get", "session.reset.atHour", "--json", env={"OPENCLAW_SESSION__RESET__AT_HOUR": "7"}
    )
    assert result.returncode == 0, result.stderr
    assert result.json()["value"] == 7


def test_invalid_environment_value_is_a_clear_error(cli) -> None:
    result = cli("config", "get", "session.dmScope", env={"OPENCLAW_SESSION__DMSCOPE": "bogus"})
    _assert_one_line_error(result, "session.dmScope", "environment")


def test_get_unknown_key(cli) -> None:
    _assert_one_line_error(cli("config", "get", "session.nope"), "unknown config key 'session.nope'")


def test_get_malformed_key(cli) -> None:
    _assert_one_line_error(cli("config", "get", "session..dmScope"), "invalid config key")


# --- set -------------------------------------------------------------------------------------------


def test_set_writes_a_private_file_and_get_reads_it_back(cli, home: Path) -> None:
    result = cli("config", "set", "session.reset.atHour", "5")
    assert result.returncode == 0, result.stderr
    path = home / CONFIG
    assert json.loads(path.read_text(encoding="utf-8")) == {"session": {"reset": {"atHour": 5}}}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert cli("config", "get", "session.reset.atHour").stdout.strip() == "5"


def test_set_keeps_the_other_keys_of_the_file(cli, home: Path) -> None:
    path = _write_config(home, '{"session": {"fsync": "always"}, "memory": {"shareUserMemory": true}}')
    assert cli("config", "set", "session.dmScope", "per-peer").returncode == 0
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data == {
        "session": {"fsync": "always", "dmScope": "per-peer"},
        "memory": {"shareUserMemory": True},
    }


def test_set_does_not_write_environment_overrides_into_the_file(cli, home: Path) -> None:
    env = {"OPENCLAW_SESSION__DMSCOPE": "per-peer"}
    assert cli("config", "set", "session.reset.atHour", "6", env=env).returncode == 0
    assert json.loads((home / CONFIG).read_text(encoding="utf-8")) == {"session": {"reset": {"atHour": 6}}}


def test_set_bad_value_fails_and_leaves_the_file_byte_for_byte(cli, home: Path) -> None:
    original = '// my settings\n{session: {dmScope: "per-peer",},}\n'
    path = _write_config(home, original)
    before = path.read_bytes()
    _assert_one_line_error(
        cli("config", "set", "session.reset.atHour", "99"), "session.reset.atHour", str(path)
    )
    _assert_one_line_error(cli("config", "set", "session.dmScope", "sideways"), "session.dmScope")
    assert path.read_bytes() == before


def test_set_bad_value_without_a_file_creates_no_file(cli, home: Path) -> None:
    _assert_one_line_error(cli("config", "set", "--", "session.reset.atHour", "-1"), "session.reset.atHour")
    assert not (home / CONFIG).exists()


def test_set_unknown_key_fails_and_changes_nothing(cli, home: Path) -> None:
    path = _write_config(home, '{"session": {"dmScope": "main"}}')
    before = path.read_bytes()
    _assert_one_line_error(cli("config", "set", "session.nope", "1"), "unknown config key 'session.nope'")
    _assert_one_line_error(cli("config", "set", "nope", "1"), "unknown config key 'nope'")
    assert path.read_bytes() == before


# --- bad files -------------------------------------------------------------------------------------


def test_invalid_json5_file_names_the_file_and_is_not_overwritten(cli, home: Path) -> None:
    path = _write_config(home, '{session: {dmScope: "per-peer"')
    before = path.read_bytes()
    _assert_one_line_error(cli("config", "show"), str(path), "invalid JSON5")
    _assert_one_line_error(cli("config", "get", "session.dmScope"), str(path))
    _assert_one_line_error(cli("config", "set", "session.dmScope", "main"), str(path), "invalid JSON5")
    assert path.read_bytes() == before


def test_unknown_key_in_the_file_is_named(cli, home: Path) -> None:
    path = _write_config(home, '{"session": {"bogus": 1}}')
    _assert_one_line_error(cli("config", "show"), str(path), "session.bogus")


def test_bad_value_in_the_file_is_named_with_the_reason(cli, home: Path) -> None:
    path = _write_config(home, '{"memory": {"search": {"candidates": 0}}}')
    _assert_one_line_error(
        cli("config", "show"), str(path), "memory.search.candidates", "greater than or equal to 1"
    )


def test_file_that_is_not_an_object(cli, home: Path) -> None:
    path = _write_config(home, "[1, 2, 3]")
    before = path.read_bytes()
    _assert_one_line_error(cli("config", "show"), str(path), "must be an object")
    _assert_one_line_error(cli("config", "set", "session.dmScope", "main"), "must be an object")
    assert path.read_bytes() == before


def test_file_that_is_not_utf8(cli, home: Path) -> None:
    home.mkdir(mode=0o700, parents=True)
    (home / CONFIG).write_bytes(b'{"session": {"dmScope": "\xff"}}')
    _assert_one_line_error(cli("config", "show"), str(home / CONFIG), "UTF-8")


def test_json5_comments_trailing_commas_and_unquoted_keys_are_read(cli, home: Path) -> None:
    _write_config(
        home,
        """
        // line comment
        {
          /* block comment */
          session: {
            dmScope: 'per-account-channel-peer',  // single quotes too
            reset: {atHour: 0x3,},
          },
        }
        """,
    )
    values = cli("config", "show", "--json").json()
    assert values["session"]["dmScope"] == "per-account-channel-peer"
    assert values["session"]["reset"]["atHour"] == 3


def test_empty_file_means_defaults(cli, home: Path) -> None:
    _write_config(home, "  \n")
    assert cli("config", "get", "session.dmScope").stdout.strip() == "main"
