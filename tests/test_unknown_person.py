"""A person id that matches nobody is said, with the persons it may have meant (issue 48, "silent commands"):
`/v1/chat/completions` stores its `user` as `openai:alice`, and `memory list --user alice` printed nothing
and exited 0, as if Alice had no memories."""

from __future__ import annotations

from pathlib import Path

import pytest

from openclaw_cli.memory.store.persons import close_matches
from tests.conftest import run_cli
from tests.home_copies import copy_home

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

WARNING = (
    "openclaw: warning: no memories of user 'alice' (user ids match exactly; did you mean openai:alice?)\n"
)


@pytest.fixture(scope="module")
def stored_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Alice's memory under a channel's id and Bob's, added once for the module by the real CLI."""
    home = tmp_path_factory.mktemp("unknown-person") / "home"
    for text, user in (("likes green tea", "openai:alice"), ("plays the cello", "bob")):
        added = run_cli(home, "memory", "add", text, "--user", user, "-c", "preference")
        assert added.returncode == 0, added.stderr
    return home


@pytest.fixture
def stored(stored_once: Path, home: Path) -> Path:
    """This test's own copy of the module's home, at the home `cli` runs against."""
    return copy_home(stored_once, home)


def test_list_for_a_person_stored_under_a_channel_names_the_match(cli, stored: Path) -> None:  # type: ignore[no-untyped-def]
    listed = cli("memory", "list", "--user", "alice")
    assert listed.returncode == 0
    assert listed.stdout == ""
    assert listed.stderr == WARNING


def test_list_json_stays_a_json_list_and_warns_on_stderr(cli, stored: Path) -> None:  # type: ignore[no-untyped-def]
    listed = cli("memory", "list", "--user", "alice", "--json")
    assert listed.returncode == 0
    assert listed.json() == []
    assert listed.stderr == WARNING


def test_search_names_the_match_too(cli, stored: Path) -> None:  # type: ignore[no-untyped-def]
    found = cli("memory", "search", "green tea", "--user", "alice")
    assert found.returncode == 0
    assert "did you mean openai:alice?" in found.stderr


def test_a_person_nobody_resembles_gets_no_suggestion(cli, stored: Path) -> None:  # type: ignore[no-untyped-def]
    listed = cli("memory", "list", "--user", "zed")
    assert listed.returncode == 0
    assert listed.stderr == "openclaw: warning: no memories of user 'zed' (user ids match exactly)\n"


def test_a_known_person_with_nothing_in_the_filter_gets_no_warning(cli, stored: Path) -> None:  # type: ignore[no-untyped-def]
    listed = cli("memory", "list", "--user", "bob", "-c", "event")
    assert (listed.returncode, listed.stdout, listed.stderr) == (0, "", "")


def test_a_known_person_is_listed_as_before(cli, stored: Path) -> None:  # type: ignore[no-untyped-def]
    listed = cli("memory", "list", "--user", "openai:alice")
    assert listed.returncode == 0 and "likes green tea" in listed.stdout and listed.stderr == ""


@pytest.mark.parametrize(
    ("wanted", "known", "expected"),
    [
        ("alice", ["openai:alice", "bob"], ["openai:alice"]),
        ("Alice", ["alice", "bob"], ["alice"]),
        ("telegram:alice", ["openai:alice", "alice"], ["alice", "openai:alice"]),
        ("alcie", ["alice", "bob"], ["alice"]),
        ("zed", ["alice", "bob"], []),
        ("alice", ["alice"], []),
    ],
)
def test_close_matches(wanted: str, known: list[str], expected: list[str]) -> None:
    assert close_matches(wanted, known) == expected
