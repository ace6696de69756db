"""openclaw.toml: read when there is no openclaw.json, edited by `config set` with its comments kept, hot
reloaded by the gateway's watcher; both files at once and a syntax error are one-line errors."""

from __future__ import annotations

import asyncio
import tomllib
from pathlib import Path

import pytest

from openclaw_cli.config.loading import Settings, load_settings, set_key
from openclaw_cli.core.errors import ConfigError
from openclaw_cli.core.paths import Home
from openclaw_cli.gateway.config_watch import ConfigWatcher

COMMENTED = """# my assistant
owner = "alice"  # the owner

[session]
dmScope = "per-peer"  # safe DMs

[session.reset]
atHour = 5
"""


def _toml_home(tmp_path: Path, text: str = COMMENTED) -> Home:
    home = Home(tmp_path / "home")
    home.ensure_root()
    (home.root / "openclaw.toml").write_text(text, encoding="utf-8")
    return home


def test_toml_is_read_when_there_is_no_json(tmp_path: Path) -> None:
    home = _toml_home(tmp_path)
    assert home.config_file.name == "openclaw.toml"
    settings = load_settings(home.config_file, {})
    assert settings.owner == "alice"
    assert settings.session.dm_scope == "per-peer"
    assert settings.session.reset.at_hour == 5


def test_json_is_the_file_when_there_is_neither(tmp_path: Path) -> None:
    assert Home(tmp_path / "empty").config_file.name == "openclaw.json"


def test_set_keeps_comments_and_layout(tmp_path: Path) -> None:
    home = _toml_home(tmp_path)
    set_key(home.config_file, "session.reset.idleMinutes", 30, {})
    set_key(home.config_file, "memory.reflection.minUnreflected", 10, {})
    set_key(home.config_file, "session.dmScope", "main", {})
    text = home.config_file.read_text(encoding="utf-8")
    assert text.startswith('# my assistant\nowner = "alice"  # the owner\n')
    assert 'dmScope = "main"  # safe DMs' in text  # the value changed, its comment stayed
    assert tomllib.loads(text) == {
        "owner": "alice",
        "session": {"dmScope": "main", "reset": {"atHour": 5, "idleMinutes": 30}},
        "memory": {"reflection": {"minUnreflected": 10}},
    }
    assert not (home.root / "openclaw.json").exists()


def test_set_of_an_invalid_value_changes_nothing(tmp_path: Path) -> None:
    home = _toml_home(tmp_path)
    with pytest.raises(ConfigError, match="atHour"):
        set_key(home.config_file, "session.reset.atHour", 99, {})
    assert home.config_file.read_text(encoding="utf-8") == COMMENTED


def test_null_cannot_be_written_to_toml(tmp_path: Path) -> None:
    home = _toml_home(tmp_path)
    with pytest.raises(ConfigError, match="TOML has no null"):
        set_key(home.config_file, "session.reset.atHour", None, {})
    assert home.config_file.read_text(encoding="utf-8") == COMMENTED


def test_syntax_error_names_its_line(tmp_path: Path) -> None:
    home = _toml_home(tmp_path, COMMENTED + "idleMinutes = \n")
    with pytest.raises(ConfigError) as caught:
        load_settings(home.config_file, {})
    assert "invalid TOML" in caught.value.message
    assert "line 9" in caught.value.message
    assert "\n" not in caught.value.message


def test_wrong_type_in_toml_names_the_key(tmp_path: Path) -> None:
    home = _toml_home(tmp_path, '[session.reset]\natHour = "five"\n')
    with pytest.raises(ConfigError, match="session.reset.atHour"):
        load_settings(home.config_file, {})


def test_both_files_is_an_error_on_every_path(tmp_path: Path) -> None:
    home = _toml_home(tmp_path)
    (home.root / "openclaw.json").write_text('{owner: "bob"}', encoding="utf-8")
    for path in (home.config_file, home.root / "openclaw.toml"):
        with pytest.raises(ConfigError, match="both .*openclaw.json and .*openclaw.toml exist"):
            load_settings(path, {})
    with pytest.raises(ConfigError, match="both"):
        set_key(home.config_file, "owner", "carol", {})
    assert (home.root / "openclaw.json").read_text(encoding="utf-8") == '{owner: "bob"}'
    assert (home.root / "openclaw.toml").read_text(encoding="utf-8") == COMMENTED


def test_watcher_reloads_toml_and_keeps_running_config_on_error(tmp_path: Path) -> None:
    home = _toml_home(tmp_path)
    path = home.config_file
    running: list[Settings] = [load_settings(path, {})]
    rejected: list[str] = []

    async def apply(settings: Settings) -> None:
        running.append(settings)

    async def scenario() -> None:
        watcher = ConfigWatcher(path, {}, apply, rejected.append, lambda: running[-1])
        assert await watcher.check() is None  # unchanged
        path.write_text(COMMENTED.replace("atHour = 5", "atHour = 6"), encoding="utf-8")
        assert await watcher.check() is True
        assert running[-1].session.reset.at_hour == 6
        path.write_text(COMMENTED + "[broken\n", encoding="utf-8")
        assert await watcher.check() is False
        assert running[-1].session.reset.at_hour == 6
        assert "invalid TOML" in rejected[-1] and "line 9" in rejected[-1]
        path.write_text(COMMENTED, encoding="utf-8")
        assert await watcher.check() is True
        json_file = home.root / "openclaw.json"
        json_file.write_text('{session: {reset: {atHour: 8}}}', encoding="utf-8")  # a second file
        assert await watcher.check() is False
        assert "both" in rejected[-1] and running[-1].session.reset.at_hour == 5
        path.unlink()  # moved to JSON: the watcher follows
        assert await watcher.check() is True
        assert running[-1].session.reset.at_hour == 8

    asyncio.run(scenario())


def test_cli_reads_and_sets_toml(home: Path, cli) -> None:  # type: ignore[no-untyped-def]
    home.mkdir(mode=0o700)
    (home / "openclaw.toml").write_text(COMMENTED, encoding="utf-8")
    assert cli("config", "path").stdout.strip() == str(home / "openclaw.toml")
    assert cli("config", "set", "session.reset.atHour", "7").returncode == 0
    got = cli("config", "get", "session.reset.atHour", "--json").json()
    assert got == {"key": "session.reset.atHour", "value": 7}
    assert "# my assistant" in (home / "openclaw.toml").read_text(encoding="utf-8")
    (home / "openclaw.toml").write_text("[session\n", encoding="utf-8")
    bad = cli("config", "show")
    assert bad.returncode == 1
    assert len(bad.stderr.strip().splitlines()) == 1
    assert "invalid TOML" in bad.stderr and "line 1" in bad.stderr
    (home / "openclaw.toml").write_text(COMMENTED, encoding="utf-8")
    append = ("session", "append", "agent:main:main", "--role", "user", "hello")
    assert cli(*append).returncode == 0  # its settings are now cached (cli/session/helpers.py)
    (home / "openclaw.json").write_text("{}", encoding="utf-8")
    for args in (("config", "show", "--json"), append):
        both = cli(*args)
        assert both.returncode == 1, args
        assert len(both.stderr.strip().splitlines()) == 1
        assert "both" in both.stderr
