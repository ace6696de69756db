"""Bad inputs and file states through the real CLI: one line on stderr and exit 1 or 2, never exit 70,
no traceback, and nothing stored changes. Plus the output conventions: camelCase JSON keys, no Python
reprs in human output, and `--record-hit` surviving a hit deleted between search and review."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.memory.search.pipeline import SearchRequest
from tests.bad_input_helpers import KEY, Case, check_case, seed_home
from tests.conftest import run_cli
from tests.memory_helpers import add, service_for

# The memory commands run in this process (tests/inprocess.py): these tests are about what a command says
# and what it leaves stored; tests/test_memory_cli.py and the other modules keep real processes for them.
CLI_IN_PROCESS = True

BAD = os.fsdecode(b"\xff")  # subprocess encodes it back to the raw byte (surrogateescape)
DEEP_CONFIG = '{"a":' * 3000 + "1" + "}" * 3000
BAD_FSYNC = '{session: {fsync: "bogus"}}'
SEARCH_HINT_IS_NOT_ADD = "nothing was stored"


def _deep_source(levels: int) -> str:
    return json.dumps({"text": "deep"})[:-1] + ', "source": ' + '{"a":' * levels + "1" + "}" * levels + "}"


def _add_batch(case_id: str, line: str, *says: str) -> Case:
    return Case(
        case_id, ("memory", "add", "--batch", "{tmp}/in.jsonl"), 1, {"in.jsonl": line + "\n"}, says=says
    )


def _search_batch(case_id: str, line: str, *says: str) -> Case:
    return Case(
        case_id,
        ("memory", "search", "--batch", "{tmp}/in.jsonl"),
        1,
        {"in.jsonl": line + "\n"},
        says=says,
        never=(SEARCH_HINT_IS_NOT_ADD,),
    )


CASES = [
    # Arguments that are not UTF-8: refused before any command runs (a usage error).
    Case("argv-memory-add", ("memory", "add", BAD), 2, says=("argument 3 is not valid UTF-8",)),
    Case("argv-memory-get", ("memory", "get", BAD), 2, says=("not valid UTF-8",)),
    Case("argv-memory-delete", ("memory", "delete", BAD), 2, says=("not valid UTF-8",)),
    Case("argv-memory-history", ("memory", "history", BAD), 2, says=("not valid UTF-8",)),
    Case("argv-memory-search", ("memory", "search", BAD), 2, says=("not valid UTF-8",)),
    Case("argv-user-list", ("memory", "list", "--user", BAD), 2, says=("not valid UTF-8",)),
    Case(
        "argv-user-add", ("memory", "add", "x", "--user", "ab" + BAD), 2, says=("byte 0xff at character 3",)
    ),
    Case("argv-session-append-text", ("session", "append", KEY, BAD), 2, says=("not valid UTF-8",)),
    Case("argv-session-append-key", ("session", "append", BAD, "hi"), 2, says=("not valid UTF-8",)),
    # memory add --batch: the whole file is validated first, a bad line stores nothing.
    _add_batch(
        "add-created-naive", '{"text": "a", "createdAt": "2024-01-01T00:00:00"}', "line 1", "timezone"
    ),
    _add_batch("add-created-9999", '{"text": "a", "createdAt": "9999-12-31T23:59:59Z"}', "between 1970"),
    _add_batch(
        "add-created-year-1", '{"text": "a", "createdAt": "0001-01-01T00:00:00+01:00"}', "between 1970"
    ),
    _add_batch("add-created-not-iso", '{"text": "a", "createdAt": "yesterday"}', "not an ISO 8601"),
    _add_batch("add-source-5000-deep", _deep_source(5000), "nested too deeply"),
    _add_batch("add-source-40-deep", _deep_source(40), "'source' is nested more than 32"),
    _add_batch(
        "add-int-4301-digits", '{"text": "a", "source": {"n": ' + "1" * 4301 + "}}", "unusable number"
    ),
    _add_batch("add-float-1e400", '{"text": "a", "source": {"n": 1e400}}', "unusable number"),
    _add_batch("add-nan", '{"text": "a", "source": {"n": NaN}}', "unusable number"),
    _add_batch("add-category-int", '{"text": "a", "category": 5}', "'category' must be a string"),
    _add_batch("add-user-int", '{"text": "a", "userId": 5}', "'userId' must be a string"),
    _add_batch("add-second-line-bad", '{"text": "fine"}\n{"text": 5}', "line 2", "nothing was stored"),
    # memory search --batch: every field is checked, with a hint that fits a search.
    _search_batch("search-mode-bogus", '{"query": "x", "mode": "bogus"}', "unknown mode 'bogus'"),
    _search_batch(
        "search-explain-string", '{"query": "x", "explain": "no"}', "'explain' must be true or false"
    ),
    _search_batch("search-user-int", '{"query": "x", "userId": 5}', "'userId' must be a string"),
    _search_batch("search-category-int", '{"query": "x", "category": 5}', "'category' must be a string"),
    _search_batch("search-category-unknown", '{"query": "x", "category": "bogus"}', "unknown category"),
    _search_batch("search-scope-unknown", '{"query": "x", "scope": "bogus"}', "unknown scope"),
    _search_batch("search-not-json", "{bad", "not valid JSON"),
    _search_batch("search-deep", '{"query": ' + "[" * 5000 + "]" * 5000 + "}", "nested too deeply"),
    # --batch FILE that is not a file.
    Case("add-batch-directory", ("memory", "add", "--batch", "{tmp}"), 1, says=("is a directory",)),
    Case("search-batch-directory", ("memory", "search", "--batch", "{tmp}"), 1, says=("is a directory",)),
    Case("add-batch-missing", ("memory", "add", "--batch", "{tmp}/nope.jsonl"), 1, says=("no such file",)),
    # Options: out-of-range and unknown values are usage errors.
    Case(
        "search-k-500",
        ("memory", "search", "x", "-k", "500"),
        2,
        says=("'-k' / '--top'", "between 1 and 200"),
    ),
    Case("search-k-0", ("memory", "search", "x", "-k", "0"), 2, says=("between 1 and 200",)),
    Case("search-mode-semantic", ("memory", "search", "x", "--mode", "semantic"), 2, says=("unknown mode",)),
    Case("list-category-unknown", ("memory", "list", "-c", "bogus"), 2, says=("unknown category 'bogus'",)),
    Case("search-category-empty", ("memory", "search", "x", "-c", ""), 2, says=("no category given",)),
    Case("search-category-commas", ("memory", "search", "x", "-c", ","), 2, says=("no category given",)),
    Case("list-scope-unknown", ("memory", "list", "--scope", "bogus"), 2, says=("unknown scope 'bogus'",)),
    Case(
        "add-category-unknown", ("memory", "add", "x", "-c", "bogus"), 2, says=("unknown category 'bogus'",)
    ),
    Case("add-scope-unknown", ("memory", "add", "x", "--scope", "bogus"), 2, says=("unknown scope 'bogus'",)),
    Case("list-limit-zero", ("memory", "list", "--limit", "0"), 2, says=("--limit",)),
    # Settings: a bad OPENCLAW_* variable or openclaw.json is one line naming the variable/file and key.
    Case(
        "env-session-not-json-memory",
        ("memory", "list"),
        1,
        env={"OPENCLAW_SESSION": "{bad"},
        says=("environment variable OPENCLAW_SESSION", "'session'"),
    ),
    Case(
        "env-session-not-json-config",
        ("config", "show"),
        1,
        env={"OPENCLAW_SESSION": "{bad"},
        says=("OPENCLAW_SESSION",),
    ),
    Case(
        "env-session-not-json-append",
        ("session", "append", KEY, "hi"),
        1,
        env={"OPENCLAW_SESSION": "{bad"},
        says=("OPENCLAW_SESSION",),
    ),
    Case(
        "config-deep-memory",
        ("memory", "list"),
        1,
        config=DEEP_CONFIG,
        says=("openclaw.json", "nested too deeply"),
    ),
    Case(
        "config-deep-append",
        ("session", "append", KEY, "hi"),
        1,
        config=DEEP_CONFIG,
        says=("nested too deeply",),
    ),
    Case(
        "config-bad-key-append",
        ("session", "append", KEY, "hi"),
        1,
        config=BAD_FSYNC,
        says=("openclaw.json", "key 'session.fsync'"),
    ),
    Case(
        "config-bad-key-session-key",
        ("session", "key", "--channel", "t", "--peer", "1"),
        1,
        config=BAD_FSYNC,
        says=("openclaw.json", "key 'session.fsync'"),
    ),
    Case(
        "config-bad-key-memory",
        ("memory", "list"),
        1,
        config=BAD_FSYNC,
        says=("openclaw.json", "key 'session.fsync'"),
    ),
    Case(
        "config-bad-key-config-get",
        ("config", "get", "session.dmScope"),
        1,
        config=BAD_FSYNC,
        says=("key 'session.fsync'",),
    ),
]

# `doctor` reports a bad configuration as a finding on stdout (exit 1), not as one error line.
DOCTOR_CASES = [
    pytest.param(
        {"OPENCLAW_SESSION": "{bad"}, None, "environment variable OPENCLAW_SESSION", id="env-not-json"
    ),
    pytest.param({}, DEEP_CONFIG, "nested too deeply", id="config-3000-deep"),
    pytest.param({}, BAD_FSYNC, "key 'session.fsync'", id="config-bad-key"),
]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One home for the whole table: a memory and a session."""
    return seed_home(tmp_path_factory.mktemp("bad-inputs") / "home")


@pytest.fixture
def config_file(seeded: Path) -> Iterator[Path]:
    path = seeded / "openclaw.json"
    yield path
    path.unlink(missing_ok=True)


@pytest.mark.parametrize("case", [c.param() for c in CASES])
def test_bad_input_is_one_line_and_changes_nothing(case: Case, seeded: Path, tmp_path: Path) -> None:
    check_case(case, seeded, tmp_path)


@pytest.mark.parametrize(("env", "config", "finding"), DOCTOR_CASES)
def test_doctor_reports_bad_settings_as_a_finding(
    env: dict[str, str], config: str | None, finding: str, seeded: Path, config_file: Path
) -> None:
    if config is not None:
        config_file.write_text(config, encoding="utf-8")
    result = run_cli(seeded, "doctor", "--json", env=env)
    assert result.returncode == 1 and result.stderr == "", result.stderr
    errors = [f for f in result.json()["findings"] if f["check"] == "config"]
    assert errors[0]["severity"] == "error" and finding in errors[0]["message"]


def test_a_huge_list_limit_means_no_limit(seeded: Path) -> None:
    # Larger than SQLite's integer (it overflowed with exit 70): more than any database holds, so all.
    result = run_cli(seeded, "memory", "list", "--limit", "99999999999999999999", "--json")
    assert result.returncode == 0 and result.stderr == ""
    assert [r["l0"] for r in result.json()] == ["prefers green tea"]


# --- output conventions -------------------------------------------------------------------------------

CAMEL = re.compile(r"^[a-z][A-Za-z0-9]*$")
# Keys that are user data or names, not schema: record provenance, identity links, file and scope names.
USER_DATA_KEYS = {"source", "identityLinks", "files", "byScope"}


def non_camel_keys(value: Any, where: str = "$") -> list[str]:
    found: list[str] = []
    if isinstance(value, dict):
        for key, child in value.items():
            if not CAMEL.match(str(key)):
                found.append(f"{where}.{key}")
            if key not in USER_DATA_KEYS:
                found += non_camel_keys(child, f"{where}.{key}")
    elif isinstance(value, list):
        for n, child in enumerate(value):
            found += non_camel_keys(child, f"{where}[{n}]")
    return found


def test_every_json_output_uses_camel_case_keys(tmp_path: Path, seeded: Path) -> None:
    home = seeded
    rid = run_cli(home, "memory", "add", "likes long walks", "--json").json()["id"]
    commands = [
        ("config", "path"),
        ("config", "show"),
        ("config", "get", "session.reset"),
        ("doctor",),
        ("session", "list"),
        ("session", "show", KEY),
        ("session", "append", KEY, "hi"),
        ("session", "key", "--channel", "telegram", "--peer", "1"),
        ("session", "sweep"),
        ("session", "context", KEY, "--budget", "100"),
        ("memory", "get", rid),
        ("memory", "list"),
        ("memory", "search", "walks", "--explain"),
        ("memory", "history", rid),
        ("memory", "status"),
        ("memory", "index", "--check"),
        ("memory", "index"),
        ("session", "new", KEY),
        ("session", "archive", KEY),
        ("memory", "delete", rid),
    ]
    for command in commands:
        result = run_cli(home, *command, "--json")
        assert result.returncode == 0, (command, result.stderr)
        assert non_camel_keys(result.json()) == [], command
    batch = run_cli(
        home, "memory", "search", "--batch", "-", "--json", input='{"query": "tea", "explain": true}\n'
    )
    assert batch.returncode == 0, batch.stderr
    assert [non_camel_keys(doc) for doc in batch.json_lines()] == [[]]


def test_the_key_check_skips_only_user_data() -> None:
    assert non_camel_keys({"source": {"chat_id": 1}, "a_b": {"c": 1}}) == ["$.a_b"]


REPRS = re.compile(r"\bNone\b|\{'|\['|\brank=")


def test_human_output_never_shows_python_reprs(seeded: Path) -> None:
    home = seeded
    rid = run_cli(home, "memory", "add", "never reviewed", "--json").json()["id"]
    assert run_cli(home, "session", "append", KEY, "hi again").returncode == 0  # a session to show
    commands = [
        ("memory", "get", rid),
        ("memory", "list"),
        ("memory", "search", "reviewed", "--explain"),
        ("memory", "status"),
        ("memory", "index", "--check"),
        ("memory", "index"),
        ("memory", "history", rid),
        ("session", "show", KEY),
        ("session", "list"),
        ("config", "show"),
        ("doctor",),
    ]
    for command in commands:
        result = run_cli(home, *command)
        assert result.returncode == 0, (command, result.stderr)
        assert not REPRS.search(result.stdout), (command, result.stdout)
    run_cli(home, "memory", "delete", rid)


def test_index_check_json_is_camel_case(seeded: Path) -> None:
    databases = run_cli(seeded, "memory", "index", "--check", "--json").json()["databases"]
    assert {"vectorsPending", "ftsOutdated", "storedEmbedder", "embedderMismatch"} <= set(databases[0])


# --- search --record-hit against a concurrent delete ---------------------------------------------------


def test_record_hits_skips_a_hit_deleted_after_the_search(seeded: Path) -> None:
    service = service_for(seeded)
    try:
        kept = add(service, "the office wifi password is on the fridge", user_id="hits")
        gone = add(service, "the office wifi router is in the hallway", user_id="hits")
        hits = [
            h.record.id
            for h in service.search(SearchRequest("office wifi", user_id="hits", mode="bm25")).hits
        ]
        assert set(hits) == {kept, gone}
        before = service.get(kept).fsrs.reps
        service.delete(gone)  # what a second process does between the search and the review
        reviewed = service.record_hits(hits, datetime.now(UTC))
        assert reviewed == [kept]
        assert service.get(kept).fsrs.reps == before + 1
        service.delete(kept)
    finally:
        service.close()
