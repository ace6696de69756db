"""Strings that are not text, on every input path, and the smaller input checks (issue 21).

A lone surrogate escape (`"\\ud800"` in JSON) parses, but cannot be stored, printed or tokenized: each
input path refuses it where it enters, naming the field, and stores nothing (before, it was an internal
error, exit 70, somewhere later). Bytes on stdin that are not UTF-8 are refused the same way.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.bad_input_helpers import KEY, Case, check_case, seed_home, snapshot
from tests.conftest import run_cli

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

LONE = "\\ud800"  # as JSON spells it: the parsed string holds U+D800 alone
SAYS_LONE = "lone surrogate \\ud800"
ENCODED_SURROGATE = b"a \xed\xa0\x80 b"  # U+D800 encoded as if it were a character: not UTF-8
AGENT_LIST_LONE = '[{"id": "x", "name": "a' + LONE + '"}]'
AGENT_NAME_LONE = '{"list": ' + AGENT_LIST_LONE + "}"


def _add_batch(case_id: str, line: str, *says: str) -> Case:
    files = {"in.jsonl": line + "\n"}
    return Case(case_id, ("memory", "add", "--batch", "{tmp}/in.jsonl"), 1, files, says=says)


def _search_batch(case_id: str, line: str, *says: str) -> Case:
    files = {"in.jsonl": line + "\n"}
    return Case(case_id, ("memory", "search", "--batch", "{tmp}/in.jsonl"), 1, files, says=says)


def _config_set(case_id: str, key: str, value: str, *says: str) -> Case:
    return Case(case_id, ("config", "set", key, value), 1, says=(key, *says), never=("No such option",))


CASES = [
    # memory add --batch (each field: the in-process tests below)
    _add_batch("add-batch-text", '{"text": "tea ' + LONE + '"}', "line 1", "'text'", SAYS_LONE),
    # memory search --batch
    _search_batch("search-batch-query", '{"query": "tea ' + LONE + '"}', "line 1", "'query'", SAYS_LONE),
    # session import
    Case(
        "session-import-content",
        ("session", "import", "{tmp}/s.jsonl"),
        1,
        {
            "s.jsonl": '{"type": "meta", "sessionId": "s-01a2343a-8b65-7d28-bed4-3dae5d0b84ab", "sessionKey": "agent:main:main"}\n'
            '{"type": "message", "idx": 0, "role": "user", "content": "hi ' + LONE + '"}\n'
        },
        says=("line 2", "'content'", SAYS_LONE, "nothing was imported"),
    ),
    # openclaw.json, OPENCLAW_* variables and config set
    Case(
        "config-file-get",
        ("config", "get", "session.dmScope"),
        1,
        config='{session: {dmScope: "main' + LONE + '"}}',
        says=("openclaw.json", "key 'session.dmScope'", SAYS_LONE),
    ),
    Case(
        "config-file-free-text-key",
        ("memory", "list"),
        1,
        config="{agents: " + AGENT_NAME_LONE + "}",
        says=("openclaw.json", "key 'agents.list[0].name'", SAYS_LONE),
    ),
    Case(
        "config-env",
        ("config", "get", "agents"),
        1,
        env={"OPENCLAW_AGENTS": AGENT_NAME_LONE},
        says=("OPENCLAW_* environment", "key 'agents.list[0].name'", SAYS_LONE),
    ),
    _config_set("config-set-value", "session.dmScope", '"main' + LONE + '"', "the value for", SAYS_LONE),
    _config_set("config-set-nested-value", "agents.list", AGENT_LIST_LONE, "key '[0].name'"),
    # standard input that is not UTF-8 (an encoded surrogate, as some tools write it)
    Case("stdin-memory-add", ("memory", "add", "-"), 1, input=ENCODED_SURROGATE, says=("not valid UTF-8",)),
    Case("stdin-memory-note", ("memory", "note", "-"), 1, input=ENCODED_SURROGATE, says=("not valid UTF-8",)),
    Case(
        "stdin-session-append",
        ("session", "append", KEY, "-"),
        1,
        input=ENCODED_SURROGATE,
        says=("not valid UTF-8",),
    ),
    Case(
        "stdin-add-batch",
        ("memory", "add", "--batch", "-"),
        1,
        input=ENCODED_SURROGATE,
        says=("not valid UTF-8",),
    ),
    Case("stdin-search", ("memory", "search", "-"), 1, input=ENCODED_SURROGATE, says=("not valid UTF-8",)),
    # NUL: memory note refuses it as memory add does
    Case("note-nul", ("memory", "note", "-"), 1, input=b"deployed\x00 v2", says=("NUL",)),
    Case("add-nul", ("memory", "add", "-"), 1, input=b"deployed\x00 v2", says=("NUL",)),
    # ids: empty, or the same id twice in one batch (the second was dropped as "existing")
    Case("add-empty-id", ("memory", "add", "likes tea", "--id", ""), 1, says=("invalid memory id ''",)),
    _add_batch(
        "add-batch-same-id",
        '{"text": "likes tea", "id": "m-1"}\n{"text": "likes coffee", "id": "m-1"}',
        "line 2",
        "id 'm-1' is also the id of line 1",
        "nothing was stored",
    ),
    # float settings: neither infinite nor NaN; negative numbers are values, not options
    _config_set("config-set-infinity", "llm.timeoutSeconds", "Infinity", "finite number"),
    _config_set("config-set-minus-infinity", "llm.timeoutSeconds", "-Infinity", "finite number"),
    _config_set("config-set-nan", "llm.timeoutSeconds", "NaN", "finite number"),
    _config_set("config-set-inf-floor", "memory.search.relevanceFloor", "Infinity", "finite number"),
    _config_set("config-set-negative", "llm.timeoutSeconds", "-5", "greater than 0"),
    _config_set("config-set-negative-float", "memory.search.cosFloor", "-1.5", "greater than or equal to -1"),
]


# In-process: the same parser the CLI runs, for each field (a process per field adds only seconds).
ADD_FIELDS = [
    pytest.param('{"text": "tea", "l1": "x' + LONE + '"}', "'l1' holds a " + SAYS_LONE, id="l1"),
    pytest.param('{"text": "tea", "l2": "' + LONE + '"}', "'l2' holds a " + SAYS_LONE, id="l2"),
    pytest.param('{"text": "tea", "userId": "' + LONE + '"}', "'userId' holds", id="userId"),
    pytest.param('{"text": "tea", "category": "' + LONE + '"}', "'category' holds", id="category"),
    pytest.param('{"l0": "tea ' + LONE + '"}', "'l0' holds", id="l0"),
    pytest.param('{"text": "tea", "createdAt": "' + LONE + '"}', "'createdAt' holds", id="createdAt"),
    pytest.param('{"text": "tea", "source": {"chat": ["' + LONE + '"]}}', "'source.chat[0]'", id="source"),
    pytest.param('{"text": "tea", "source": {"k' + LONE + '": 1}}', 'the key source["k\\ud800"]', id="key"),
    pytest.param('{"text": "fine"}\n{"text": "' + LONE + '"}', "line 2: 'text' holds", id="second-line"),
]


@pytest.mark.parametrize(("lines", "says"), ADD_FIELDS)
def test_add_batch_refuses_a_lone_surrogate_in_any_field(lines: str, says: str) -> None:
    from openclaw_cli.core.errors import InvalidInput
    from openclaw_cli.memory.portability.batch import parse_add_lines

    with pytest.raises(InvalidInput) as refused:
        parse_add_lines(lines.split("\n"), "in.jsonl")
    assert says in refused.value.message and "nothing was stored" in str(refused.value.hint)


def test_search_batch_refuses_a_lone_surrogate_in_the_user() -> None:
    from openclaw_cli.core.errors import InvalidInput
    from openclaw_cli.memory.portability.batch import parse_search_line
    from openclaw_cli.memory.search.pipeline import SearchRequest

    with pytest.raises(InvalidInput) as refused:
        parse_search_line('{"query": "tea", "userId": "' + LONE + '"}', 3, SearchRequest("x"), "in.jsonl")
    assert refused.value.message == "in.jsonl line 3: 'userId' holds a lone surrogate \\ud800 at character 1"


def test_add_batch_refuses_an_id_given_twice_even_for_the_same_text() -> None:
    from openclaw_cli.core.errors import InvalidInput
    from openclaw_cli.memory.portability.batch import parse_add_lines

    line = '{"text": "likes tea", "id": "m-1"}'
    with pytest.raises(InvalidInput) as refused:
        parse_add_lines([line, '{"text": "other"}', line], "in.jsonl")
    assert refused.value.message == "in.jsonl line 3: id 'm-1' is also the id of line 1"


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return seed_home(tmp_path_factory.mktemp("bad-text") / "home")


@pytest.mark.parametrize("case", [c.param() for c in CASES])
def test_refused_in_one_line_and_nothing_changes(case: Case, seeded: Path, tmp_path: Path) -> None:
    check_case(case, seeded, tmp_path)


# --- memory import: per record, reported as the other invalid records are ---------------------------

HEADER = {"version": "1.0", "agent": "main", "exportedAt": "2026-01-01T00:00:00.000Z", "embedder": None}
GOOD = '{"id": "imp-good", "content": {"l0": "likes oolong"}, "createdAt": "2024-01-01T00:00:00Z"}'
BAD = '{"id": "imp-bad", "content": {"l0": "x", "l1": "y' + LONE + '"}, "createdAt": "2024-01-01T00:00:00Z"}'


def _jsonl_export() -> str:
    return "\n".join([json.dumps(HEADER), GOOD, BAD, json.dumps({"end": True, "records": 2})]) + "\n"


def _json_export() -> str:
    return json.dumps(HEADER)[:-1] + ', "records": [' + GOOD + ", " + BAD + "]}\n"


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        pytest.param("in.jsonl", _jsonl_export(), "records[1] (line 3)", id="jsonl"),
        pytest.param("in.json", _json_export(), "records[1]", id="json"),
    ],
)
def test_import_refuses_a_record_with_a_lone_surrogate(
    seeded: Path, tmp_path: Path, name: str, text: str, where: str
) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    before = snapshot(seeded)
    result = run_cli(seeded, "memory", "import", str(tmp_path / name))
    assert result.returncode == 1 and "internal error" not in result.stderr, result.stderr
    assert f"{where}: 'content.l1' holds a {SAYS_LONE}" in result.stderr
    assert "1 of 2 records cannot be imported; nothing was imported" in result.stderr
    assert snapshot(seeded) == before


@pytest.mark.parametrize(
    "name,text",
    [
        pytest.param("in.jsonl", _jsonl_export(), id="jsonl"),
        pytest.param("in.json", _json_export(), id="json"),
    ],
)
def test_import_skip_invalid_leaves_out_the_record_with_a_lone_surrogate(
    tmp_path: Path, name: str, text: str
) -> None:
    home = tmp_path / "home"
    (tmp_path / name).write_text(text, encoding="utf-8")
    result = run_cli(home, "memory", "import", str(tmp_path / name), "--skip-invalid", "--json")
    assert result.returncode == 0, result.stderr
    report = result.json()
    assert (report["added"], report["skippedInvalid"]) == (1, 1)
    assert report["invalid"][0]["index"] == 1 and SAYS_LONE in report["invalid"][0]["message"]
    assert run_cli(home, "memory", "get", "imp-good").returncode == 0


def test_migrate_refuses_a_lone_surrogate_and_leaves_the_file(tmp_path: Path) -> None:
    old = tmp_path / "old.jsonl"
    lines = [
        '{"version": "0.9", "agent": "main", "exportedAt": "2024-01-01T00:00:00Z", "embedder": null}',
        '{"id": "x1", "l0": "a' + LONE + '", "createdAt": "2024-01-01T00:00:00Z"}',
        '{"end": true, "records": 1}',
    ]
    old.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = old.read_bytes()
    result = run_cli(tmp_path / "home", "memory", "migrate", str(old))
    assert result.returncode == 1, result.stderr
    assert f"records[0] (line 2): 'l0' holds a {SAYS_LONE}" in result.stderr
    assert old.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["old.jsonl"]


# --- what still works -------------------------------------------------------------------------------


def test_a_surrogate_pair_escape_is_one_character_and_passes() -> None:
    from openclaw_cli.memory.portability.batch import parse_add_lines

    [(_, item)] = parse_add_lines(['{"text": "likes coffee \\ud83d\\ude00", "l1": "\\ud83c\\udf75"}'])
    assert (item.l0, item.l1) == ("likes coffee \U0001f600", "\U0001f375")


def test_a_negative_setting_that_is_valid_can_be_set(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_cli(home, "config", "set", "memory.search.cosFloor", "-0.1").returncode == 0
    assert run_cli(home, "config", "get", "memory.search.cosFloor").stdout.strip() == "-0.1"
    after_dashes = run_cli(home, "config", "set", "memory.search.cosFloor", "--", "-0.2")
    assert after_dashes.returncode == 0, after_dashes.stderr
    assert run_cli(home, "config", "get", "memory.search.cosFloor").stdout.strip() == "-0.2"


def test_a_hand_edited_message_with_a_lone_surrogate_is_skipped_on_read(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_cli(home, "session", "append", KEY, "first").returncode == 0
    [messages] = home.glob("agents/main/sessions/s-*/messages.jsonl")
    with messages.open("a", encoding="utf-8") as out:
        out.write('{"idx": 1, "role": "user", "content": "hi ' + LONE + '", "ts": "2026-01-01T00:00:00Z"}\n')
    shown = run_cli(home, "session", "show", KEY, "--json")
    assert shown.returncode == 0, shown.stderr
    assert [m["content"] for m in shown.json()["messages"]] == ["first"]
    assert f"line 2 skipped (not text: 'content' holds a {SAYS_LONE}" in shown.stderr
