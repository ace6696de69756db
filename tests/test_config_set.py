"""`config set` edits openclaw.json in place: comments, key order and layout are kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import json5
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openclaw_cli.config.edit import EditError, edited_config_text, set_in_text

COMMENTED = """// my assistant
{
  // how DMs are grouped
  session: {
    dmScope: "per-peer", // safe DMs
    reset: { atHour: 4 },
    /* identity links
       come later */
  },
  llm: {model: "openai/x"}, // the chat model
}
"""


def _comments(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if "//" in line or "/*" in line or "*/" in line]


@pytest.mark.parametrize(
    ("parts", "value"),
    [
        (["session", "dmScope"], "main"),
        (["session", "fsync"], "always"),
        (["session", "reset", "idleMinutes"], 30),
        (["session", "reset", "atHour"], None),
        (["llm", "apiBase"], "http://127.0.0.1:1/v1"),
        (["gateway", "queue", "mode"], "steer"),
        (["bindings"], [{"agentId": "work", "match": {"channel": "slack"}}]),
        (["session", "identityLinks"], {"alice": ["telegram:1", "discord:2"]}),
    ],
)
def test_edit_keeps_comments_and_order(parts: list[str], value: Any) -> None:
    edited = set_in_text(COMMENTED, parts, value)
    expected = json5.loads(COMMENTED)
    node = expected
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value
    assert json5.loads(edited) == expected
    kept = [c for c in _comments(COMMENTED) if "safe DMs" not in c or parts != ["session", "dmScope"]]
    for comment in kept:
        assert comment.split("//")[-1].strip() in edited
    assert edited.index("session") < edited.index("llm")  # order kept; new keys go last


def test_replacing_a_value_changes_nothing_else() -> None:
    edited = set_in_text(COMMENTED, ["session", "dmScope"], "main")
    assert edited == COMMENTED.replace('"per-peer"', '"main"')


def test_new_key_goes_after_the_last_member_in_its_indentation() -> None:
    edited = set_in_text(COMMENTED, ["session", "fsync"], "always")
    lines = edited.splitlines()
    at = lines.index('    fsync: "always",')
    assert lines[at - 1] == "    reset: { atHour: 4 },"  # right after the last member, before the comment
    assert lines[at + 1].strip() == "/* identity links"


def test_inline_object_gets_the_key_inline() -> None:
    assert set_in_text('{"a": {"b": 1}}', ["a", "c"], 2) == '{"a": {"b": 1, "c": 2}}'


def test_empty_object_and_empty_file() -> None:
    assert json5.loads(set_in_text("{}", ["x", "y"], 1)) == {"x": {"y": 1}}
    assert json5.loads(set_in_text("", ["x"], True)) == {"x": True}
    assert json5.loads(set_in_text("{ // nothing yet\n}", ["x"], 1)) == {"x": 1}


def test_strings_that_look_like_syntax_are_not_confused() -> None:
    text = "{ a: \"} // not a comment\", b: 'it\\'s, {x}', c: 1 }"
    edited = set_in_text(text, ["c"], 2)
    assert json5.loads(edited) == {"a": "} // not a comment", "b": "it's, {x}", "c": 2}


def test_duplicate_keys_edit_the_one_json5_reads() -> None:
    edited = set_in_text('{"a": 1, "a": 2}', ["a"], 3)
    assert json5.loads(edited) == {"a": 3}


def test_unreadable_text_falls_back_to_plain_json() -> None:
    with pytest.raises(EditError):
        set_in_text("{ a: 1 /* never closed", ["a"], 2)
    assert json.loads(edited_config_text("{ a: 1 /* never closed", ["a"], 2, {"a": 2})) == {"a": 2}


@settings(max_examples=60, deadline=None)
@given(
    value=st.one_of(
        st.integers(),
        st.booleans(),
        st.none(),
        st.text(max_size=20),
        st.lists(st.integers(), max_size=3),
        st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    ),
    parts=st.sampled_from(
        [["session", "dmScope"], ["session", "x"], ["llm"], ["new"], ["session", "reset", "y", "z"]]
    ),
)
def test_any_value_reads_back_as_set(value: Any, parts: list[str]) -> None:
    edited = set_in_text(COMMENTED, parts, value)
    node = json5.loads(edited)
    for part in parts:
        node = node[part]
    assert node == value
    assert "// my assistant" in edited and "// the chat model" in edited


def test_cli_config_set_keeps_the_files_comments(cli: Any, home: Path) -> None:
    home.mkdir(mode=0o700)
    (home / "openclaw.json").write_text(COMMENTED, encoding="utf-8")
    assert cli("config", "set", "session.dmScope", "per-channel-peer").returncode == 0
    assert cli("config", "set", "agents.maxConcurrent", "8").returncode == 0
    text = (home / "openclaw.json").read_text(encoding="utf-8")
    for comment in (
        "// my assistant",
        "// how DMs are grouped",
        "// safe DMs",
        "identity links",
        "// the chat model",
    ):
        assert comment in text
    shown = cli("config", "show", "--json").json()
    assert shown["session"]["dmScope"] == "per-channel-peer" and shown["agents"]["maxConcurrent"] == 8


def test_cli_config_set_invalid_value_leaves_the_file_alone(cli: Any, home: Path) -> None:
    home.mkdir(mode=0o700)
    (home / "openclaw.json").write_text(COMMENTED, encoding="utf-8")
    result = cli("config", "set", "gateway.queue.mode", "shout")
    assert result.returncode == 1 and "gateway.queue.mode" in result.stderr
    assert (home / "openclaw.json").read_text(encoding="utf-8") == COMMENTED
