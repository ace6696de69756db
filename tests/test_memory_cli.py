"""`openclaw memory` through the real process: happy paths, JSON shapes and every listed bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, base_env, run_cli
from tests.home_copies import copy_home

# The `cli` fixture runs memory add/get/list/search/history in this process (tests/inprocess.py): these
# tests are about what the commands print and store. The first test and the fixtures' writes keep real
# processes, as do the tests below that start their own.
CLI_IN_PROCESS = True


def _db(home: Path) -> Path:
    return home / "agents" / "main" / "memory" / "memory.sqlite"


# The memories the read-mostly tests start from, written once for the module by one real `memory add
# --batch` (the fixed ids are how the tests name them); each test gets its own copy of that home.
STORED = [
    {"id": "mem-login", "text": "fixed the login bug"},
    {"id": "mem-tea", "text": "likes green tea"},
    {"id": "mem-coffee", "text": "我喜欢喝咖啡"},
    {"id": "mem-sailing", "text": "likes sailing on weekends"},
    {"id": "mem-alice", "text": "x", "userId": "alice"},
]


@pytest.fixture(scope="module")
def stored_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("memory-cli") / "home"
    lines = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in STORED)
    done = run_cli(home, "memory", "add", "--batch", "-", "--json", input=lines)
    assert done.returncode == 0 and done.json()["added"] == len(STORED), done.stderr
    return home


@pytest.fixture
def stored(stored_once: Path, home: Path) -> Path:
    """This test's own copy of the module's home of STORED memories, where `cli` runs."""
    return copy_home(stored_once, home)


@pytest.mark.real_process
def test_add_get_list_search_history_json(cli) -> None:  # type: ignore[no-untyped-def]
    added = cli("memory", "add", "prefers dark mode in every editor", "-c", "preference", "--json")
    assert added.returncode == 0, added.stderr
    rid = added.json()["id"]
    assert cli("memory", "get", rid, "--json").json()["l0"] == "prefers dark mode in every editor"
    listed = cli("memory", "list", "--json").json()
    assert [r["id"] for r in listed] == [rid]
    found = cli("memory", "search", "dark editor theme", "--explain", "--json")
    assert found.returncode == 0, found.stderr
    doc = found.json()
    first = doc["results"][0]
    assert first["id"] == rid and {"id", "score", "category", "l0", "createdAt", "explain"} <= set(first)
    assert {"relevance", "lexical", "semantic", "bm25Rank", "vectorRank", "similarity"} <= set(
        first["explain"]
    )
    assert 0.0 <= first["score"] <= 1.0
    assert {"analyse", "bm25", "embed", "vector", "total"} <= set(doc["timingsMs"])
    history = cli("memory", "history", rid, "--json").json()
    assert [h["action"] for h in history] == ["add"]
    assert found.stderr == ""


def test_text_from_stdin(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("memory", "add", "-", "--json", input="我喜欢喝咖啡\n")
    assert result.returncode == 0, result.stderr
    assert result.json()["l0"] == "我喜欢喝咖啡"
    hits = cli("memory", "search", "咖啡", "--json").json()["results"]
    assert hits[0]["l0"] == "我喜欢喝咖啡"


def test_status_and_index_check(cli) -> None:  # type: ignore[no-untyped-def]
    cli("memory", "add", "one", "-c", "event")
    cli("memory", "add", "two", "-c", "lesson", "--scope", "agent")
    status = cli("memory", "status", "--json").json()
    db = status["databases"][0]
    assert db["byScope"] == {"agent": {"lesson": 1}, "user": {"event": 1}}
    assert db["embedder"]["dimensions"] == 896 and db["pendingVectors"] == 0 and db["index"]["ok"]
    assert db["files"]["memory.sqlite"] > 0
    check = cli("memory", "index", "--check", "--json")
    assert check.returncode == 0 and check.json()["ok"] is True


def test_empty_query_is_a_clear_error(cli, stored: Path) -> None:  # type: ignore[no-untyped-def]
    for query in ("", "   ", "\t\n"):
        result = cli("memory", "search", query)
        assert result.returncode == 1
        assert result.stderr.strip() == "openclaw: error: the query is empty (give some words to search for)"


def test_text_over_the_limit_stores_nothing(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("memory", "add", "x" * 16001)
    assert result.returncode == 1 and "over the limit of 16000" in result.stderr
    assert "(shorten it, or raise memory.maxTextChars)" in result.stderr
    assert "Traceback" not in result.stderr
    assert cli("memory", "list", "--json").json() == []


def test_empty_text_says_what_to_give(cli) -> None:  # type: ignore[no-untyped-def]
    # The hint is the validation's own, not the one for an id that is taken.
    for args, stdin in ((("memory", "add", ""), None), (("memory", "add", "-"), b"")):
        result = cli(*args, input=stdin)
        assert result.returncode == 1
        assert result.stderr.strip() == "openclaw: error: text is empty (give the memory's text)"
    assert cli("memory", "list", "--json").json() == []


def test_invalid_utf8_on_stdin(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("memory", "add", "-", input=b"caf\xe9 au lait\n")
    assert result.returncode == 1 and "not valid UTF-8" in result.stderr
    assert cli("memory", "list", "--json").json() == []


def test_unknown_id(cli, stored: Path) -> None:  # type: ignore[no-untyped-def]
    for command in ("get", "delete", "history"):
        result = cli("memory", command, "mem-nope")
        assert result.returncode == 1, command
        assert "no memory with id 'mem-nope'" in result.stderr


def test_batch_add_with_a_malformed_line_stores_nothing(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    lines = [
        '{"text": "first", "category": "event"}',
        '{"text": "second"}',
        '{"text": "third", oops}',
        '{"text": "4"}',
    ]
    result = cli("memory", "add", "--batch", "-", input="\n".join(lines) + "\n")
    assert result.returncode == 1
    assert "stdin line 3: not valid JSON" in result.stderr
    assert cli("memory", "list", "--json").json() == []
    bad_category = tmp_path / "in.jsonl"
    bad_category.write_text('{"text": "ok"}\n{"text": "x", "category": "bogus"}\n')
    result = cli("memory", "add", "--batch", str(bad_category))
    assert result.returncode == 1 and "line 2: unknown category 'bogus'" in result.stderr


def test_batch_add_is_idempotent_by_id(cli) -> None:  # type: ignore[no-untyped-def]
    lines = "\n".join(
        json.dumps({"id": f"m-{i}", "text": f"memory number {i}", "userId": "u1"}) for i in range(30)
    )
    first = cli("memory", "add", "--batch", "-", "--json", input=lines)
    assert first.returncode == 0, first.stderr
    assert first.json()["added"] == 30
    again = cli("memory", "add", "--batch", "-", "--json", input=lines)
    assert again.json() == {**again.json(), "added": 0, "skipped": 30}
    assert len(cli("memory", "list", "--user", "u1", "--json").json()) == 30


def test_search_batch_answers_in_order_and_names_a_bad_line(cli, stored: Path) -> None:  # type: ignore[no-untyped-def]
    queries = ['{"query": "green tea", "k": 1}', '{"query": "咖啡", "k": 1}', "not json", '{"query": "x"}']
    result = cli("memory", "search", "--batch", "-", input="\n".join(queries))
    assert result.returncode == 1 and "stdin line 3" in result.stderr
    answers = result.json_lines()
    assert [a["results"][0]["l0"] for a in answers] == ["likes green tea", "我喜欢喝咖啡"]


def test_fts_syntax_in_queries_never_breaks(cli) -> None:  # type: ignore[no-untyped-def]
    """FTS5 operators, prefixes, columns and quotes in a query are words to the keyword leg, never syntax:
    a query holding a word of the record finds it by that word, one holding none finds nothing (taken as
    syntax, `title:bug` would ask for a column, `NEAR(a b)` for `a` near `b`, `AND OR NOT` would not
    parse), and one with no words at all says so. Keyword search alone with --all, so that what is found
    is what the words matched; then the default search answers every one of them too."""
    cli("memory", "add", "Submitted PR #342 fixing the login bug (NEAR the deadline)")
    finds = {
        '"unbalanced': False,
        "PR*": True,
        "login-": True,
        "title:bug": True,
        "NEAR(a b)": True,
        "AND OR NOT": False,
        "(((": False,
        "🙂🙂": False,
        "a^b": False,
    }
    lines = "".join(json.dumps({"query": q}) + "\n" for q in finds)
    keyword = cli("memory", "search", "--batch", "-", "--mode", "bm25", "--all", "--json", input=lines)
    assert keyword.returncode == 0, keyword.stderr
    answers = keyword.json_lines()
    assert [a["query"] for a in answers] == list(finds)
    found = {a["query"]: [r["l0"] for r in a["results"]] for a in answers}
    record = ["Submitted PR #342 fixing the login bug (NEAR the deadline)"]
    assert found == {q: record if hit else [] for q, hit in finds.items()}
    wordless = {
        a["query"] for a in answers if "the query has no words or numbers to search for" in a["warnings"]
    }
    assert wordless == {"(((", "🙂🙂"}
    default = cli("memory", "search", "--batch", "-", "--json", input=lines)
    assert default.returncode == 0, default.stderr
    assert [a["query"] for a in default.json_lines()] == list(finds)


def test_not_sqlite_and_corrupt_database_are_reported_and_left_alone(cli, home: Path) -> None:  # type: ignore[no-untyped-def]
    path = _db(home)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"hello, I am a text file\n")
    result = cli("memory", "search", "anything")
    assert result.returncode == 1 and "is not a SQLite database" in result.stderr
    assert path.read_bytes() == b"hello, I am a text file\n"
    path.unlink()
    cli("memory", "add", "a memory")
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\x13" * (4096 - 100)  # page 1: the schema table
    path.write_bytes(bytes(data))
    for wal in (path.with_name("memory.sqlite-wal"), path.with_name("memory.sqlite-shm")):
        wal.unlink(missing_ok=True)
    before = path.read_bytes()
    result = cli("memory", "list")
    assert result.returncode == 1 and "damaged" in result.stderr and "Traceback" not in result.stderr
    assert path.read_bytes() == before


def test_two_processes_adding_at_once_lose_nothing(home: Path) -> None:
    env = base_env(home)
    batches = []
    for writer in ("a", "b"):
        lines = "\n".join(
            json.dumps({"id": f"{writer}-{i}", "text": f"writer {writer} memory {i}"}) for i in range(40)
        )
        batches.append(lines)
    singles = [
        subprocess.Popen(
            [sys.executable, "-m", "openclaw_cli", "memory", "add", f"single {i}"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for i in range(3)
    ]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "openclaw_cli", "memory", "add", "--batch", "-"],
            env=env,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in batches
    ]
    for proc, lines in zip(procs, batches, strict=True):
        assert proc.stdin is not None
        proc.stdin.write(lines.encode())
        proc.stdin.close()
    for proc in procs + singles:
        proc.wait(timeout=300)
        assert proc.returncode == 0, proc.stderr.read().decode() if proc.stderr else ""
    listed = subprocess.run(
        [sys.executable, "-m", "openclaw_cli", "memory", "list", "--json"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    assert len(json.loads(listed.stdout)) == 83


def test_purge_requires_yes(cli, stored: Path) -> None:  # type: ignore[no-untyped-def]
    refused = cli("memory", "purge", "--user", "alice")
    assert refused.returncode == 1 and "--yes" in refused.stderr
    done = cli("memory", "purge", "--user", "alice", "--yes", "--json")
    assert {k: done.json()[k] for k in ("user", "purged")} == {"user": "alice", "purged": 1}


def test_a_query_starting_with_a_dash_goes_after_double_dash(cli, stored: Path) -> None:  # type: ignore[no-untyped-def]
    result = cli("memory", "search", "--json", "--", "-login")
    assert result.returncode == 0, result.stderr
    assert result.json()["results"][0]["l0"] == "fixed the login bug"


def test_search_is_read_only_unless_record_hit(cli, stored: Path) -> None:  # type: ignore[no-untyped-def]
    rid = "mem-sailing"
    before = cli("memory", "get", rid, "--json").json()["fsrs"]
    cli("memory", "search", "sailing")
    assert cli("memory", "get", rid, "--json").json()["fsrs"] == before
    assert cli("memory", "search", "sailing", "--record-hit").returncode == 0
    after = cli("memory", "get", rid, "--json").json()["fsrs"]
    assert after["reps"] == before["reps"] + 1 and after["lastReview"] >= before["lastReview"]


def _stderr_on_a_terminal(home: Path, *args: str) -> tuple[int, str]:
    """Run the CLI with stderr on a pseudo-terminal (as a person at a shell sees it)."""
    import os
    import pty

    controller, terminal = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "openclaw_cli", *args],
        env=base_env(home, shared_models=False),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=terminal,
    )
    os.close(terminal)
    chunks = []
    while True:
        try:
            data = os.read(controller, 4096)
        except OSError:  # the terminal closes when the process exits
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(controller)
    return proc.returncode, b"".join(chunks).decode("utf-8", "replace")


def test_the_one_time_model_preparation_is_announced_on_a_terminal_only(home: Path) -> None:
    # The English model's conversion (~6 s of CPU; test_quantize.py and test_user_model_cache.py convert it
    # from scratch) is copied in: the multilingual one left to convert is what the notice is about here.
    _copy_english_conversion(home.parent / "user-cache" / "openclaw" / "models")
    status, err = _stderr_on_a_terminal(home, "memory", "add", "first memory")
    assert status == 0 and "preparing the local embedding model" in err
    status, err = _stderr_on_a_terminal(home, "memory", "add", "second memory")
    assert status == 0 and "preparing" not in err
    # A home whose multilingual model still needs converting: the English one's conversion (the longer,
    # ~6 s of CPU) is copied in from the run's cache, the piped process converts the other, silently.
    # Its own parent: base_env puts the user's cache (where conversions go) beside the home, and this
    # test's first home filled the one beside it.
    other_home = home.parent / "other" / "home"
    other_models = other_home.parent / "user-cache" / "openclaw" / "models"
    _copy_english_conversion(other_models)
    assert not list(other_models.glob("use-m3-*.onnx"))
    piped = subprocess.run(
        [sys.executable, "-m", "openclaw_cli", "memory", "add", "in a pipe"],
        env=base_env(other_home, shared_models=False),
        cwd=ROOT,
        capture_output=True,
    )
    assert piped.returncode == 0 and piped.stderr == b""
    assert list(other_models.glob("use-m3-*.onnx"))  # it did prepare the model, without a word


def _copy_english_conversion(destination: Path) -> None:
    import shutil

    from openclaw_cli.memory.embedding.onnx_embedder import local_model_files
    from openclaw_cli.memory.embedding.quantize import int8_compute_model, weights_path
    from tests.memory_helpers import shared_model_cache

    minilm = int8_compute_model(local_model_files()[0], shared_model_cache())
    destination.mkdir(parents=True, mode=0o700)
    destination.parent.chmod(0o700)
    destination.parent.parent.chmod(0o700)
    for path in (minilm, weights_path(minilm)):
        shutil.copy2(path, destination / path.name)


def test_a_single_search_answers_as_a_warm_batch_does(cli) -> None:  # type: ignore[no-untyped-def]
    """A one-shot search reads the vectors while the model loads and scans them in memory: its results
    and scores are those of the warm path `--batch` (and a gateway) uses, in English and Chinese."""
    lines = [
        json.dumps({"text": text}, ensure_ascii=False)
        for text in (
            "prefers dark mode in every editor",
            "drinks an oat milk latte every morning",
            "the payments ledger deploy broke on Friday",
            "女儿九月上小学一年级",
            "每天早上喝一杯龙井茶",
            "Lin is allergic to peanuts",
        )
    ]
    assert cli("memory", "add", "--batch", "-", input="\n".join(lines) + "\n").returncode == 0
    queries = ["what does he drink in the morning", "editor theme", "早上喝什么", "peanuts"]
    batch = cli(
        "memory", "search", "--batch", "-", input="\n".join(json.dumps({"query": q}) for q in queries)
    )
    assert batch.returncode == 0, batch.stderr
    warm = [json.loads(line)["results"] for line in batch.stdout.splitlines()]
    for query, expected in zip(queries, warm, strict=True):
        single = cli("memory", "search", query, "--json", "--local")
        assert single.returncode == 0, single.stderr
        found = single.json()["results"]
        assert found, query
        assert [(r["id"], r["score"]) for r in found] == [(r["id"], r["score"]) for r in expected]
