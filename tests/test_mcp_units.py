"""The MCP server's small parts in-process (issue 51): the client snippets, the HTTP token rule, the
marking of lone surrogates, the result shapes; and `openclaw mcp config` as a process."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from openclaw_cli.core.errors import InvalidInput, UsageError
from openclaw_cli.core.paths import Home
from openclaw_cli.mcp import views
from openclaw_cli.mcp.client_config import CLIENTS, snippet
from openclaw_cli.mcp.run import http_token, is_loopback
from openclaw_cli.mcp.transport import SURROGATE_MARK, mark_surrogates

LAUNCHER = ["/opt/venv/bin/openclaw"]
ENV = {"OPENCLAW_HOME": "/home/u/.openclaw"}


@pytest.mark.parametrize("client", CLIENTS)
def test_each_client_gets_a_stdio_entry_running_this_openclaw(client: str) -> None:
    got = snippet(client, LAUNCHER, ["mcp", "--user", "alice"], ENV)
    [servers] = got.values()
    entry = servers["openclaw"]
    assert entry["command"] == "/opt/venv/bin/openclaw"
    assert entry["args"] == ["mcp", "--user", "alice"] and entry["env"] == ENV
    assert list(got) == (["servers"] if client == "vscode" else ["mcpServers"])
    assert entry.get("type") == ("stdio" if client in ("vscode", "claude-code") else None)


def test_a_python_launcher_keeps_its_module_arguments_first() -> None:
    got = snippet("cursor", ["/usr/bin/python3", "-m", "openclaw_cli"], ["mcp"], ENV)
    assert got["mcpServers"]["openclaw"]["args"] == ["-m", "openclaw_cli", "mcp"]


def test_an_unknown_client_is_refused() -> None:
    with pytest.raises(InvalidInput, match="unknown client 'emacs'"):
        snippet("emacs", LAUNCHER, ["mcp"], ENV)


def test_config_prints_json_on_stdout_and_where_it_goes_on_stderr(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("mcp", "config", "--client", "claude-desktop")
    assert result.returncode == 0, result.stderr
    entry = result.json()["mcpServers"]["openclaw"]
    assert Path(entry["command"]).is_absolute() and "mcp" in entry["args"]
    assert Path(entry["env"]["OPENCLAW_HOME"]).is_absolute()
    assert "claude_desktop_config.json" in result.stderr


def test_config_for_an_unknown_client_is_one_line(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("mcp", "config", "--client", "emacs")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        "openclaw: error: unknown client 'emacs' (use one of claude-desktop, claude-code, cursor, vscode)"
    ]


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("192.168.1.5", False),
        ("example.org", False),
    ],
)
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_the_token_is_mcp_token_first_then_the_gateways(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    assert http_token(home, "configured-token-xxxxxxxx", "env-token-xxxxxxxxxxxx", "0.0.0.0")[0] == (
        "configured-token-xxxxxxxx"
    )
    assert http_token(home, None, "env-token-xxxxxxxxxxxx", "0.0.0.0") == ("env-token-xxxxxxxxxxxx", None)


def test_off_loopback_without_any_token_is_refused_and_nothing_is_created(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    with pytest.raises(UsageError, match="refusing to serve MCP on 0.0.0.0 without a token"):
        http_token(home, None, None, "0.0.0.0")
    assert not (tmp_path / "home").exists()


def test_on_loopback_without_a_token_the_gateway_token_is_created_0600(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    token, created = http_token(home, None, None, "127.0.0.1")
    assert created == tmp_path / "home" / "gateway" / "token" and len(token) >= 32
    assert stat.S_IMODE(created.stat().st_mode) == 0o600
    assert http_token(home, None, None, "0.0.0.0") == (token, None)  # the file is a token from now on


def test_lone_surrogates_are_marked_and_pairs_kept() -> None:
    line = '{"a": "x\\ud800y", "b": ["\\udfff"], "c": "\\ud83c\\udf75", "\\udc01": 1}'
    value = json.loads(mark_surrogates(line))
    assert value["a"] == f"x{SURROGATE_MARK}y" and value["b"] == [SURROGATE_MARK]
    assert value["c"] == "\U0001f375" and SURROGATE_MARK in value


def test_a_message_without_surrogates_is_left_as_it_is() -> None:
    line = '{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"q": "caf\\u00e9"}}'
    assert mark_surrogates(line) is line  # not even parsed


def test_an_escaped_backslash_before_u_d800_is_text_and_stays_text() -> None:
    line = '{"q": "path \\\\ud800"}'  # the JSON text spells a backslash, then "ud800"
    assert json.loads(mark_surrogates(line)) == json.loads(line) == {"q": "path \\ud800"}


def test_a_note_chunk_is_shown_as_path_and_line() -> None:
    hit = {
        "id": "mem-1",
        "l0": "x",
        "score": 1.3,
        "category": "note",
        "scope": "user",
        "createdAt": "2026-01-02T00:00:00Z",
        "location": "memory/2026-01-02.md:4-9",
    }
    shown = views.memory_hit(hit)
    assert shown["location"] == "memory/2026-01-02.md:4" and shown["endLine"] == 9
    assert shown["relevance"] == 1.0  # held to [0, 1]


def test_config_set_never_echoes_the_mcp_token(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("config", "set", "mcp.token", "a-token-of-twenty-eight-chars")
    assert result.returncode == 0, result.stderr
    assert "a-token-of" not in result.stdout + result.stderr and "mcp.token = ***" in result.stdout
    shown = cli("config", "show", "--json")
    assert shown.json()["mcp"]["token"] == "***"
