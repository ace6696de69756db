"""Lifecycle with an injected clock, context windows with tool pairs, token counting."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from openclaw_cli.core.paths import Home
from openclaw_cli.sessions.budget.context import build_context, session_context
from openclaw_cli.sessions.budget.tokens import count_tokens, estimate_tokens, get_encoding
from openclaw_cli.sessions.lifecycle import ResetPolicy, SessionManager, daily_boundary
from openclaw_cli.sessions.store import SessionStore

LOCAL = timezone(timedelta(hours=8))
KEY = "agent:main:telegram:bot:direct:42"


def manager(home: Path, **policy: object) -> SessionManager:
    return SessionManager(SessionStore(Home(home), "main"), ResetPolicy(**policy))  # type: ignore[arg-type]


def test_daily_boundary_is_the_last_reset_hour_in_local_time() -> None:
    assert daily_boundary(datetime(2026, 3, 2, 3, 59, tzinfo=LOCAL), 4) == datetime(
        2026, 3, 1, 4, tzinfo=LOCAL
    )
    assert daily_boundary(datetime(2026, 3, 2, 4, 0, tzinfo=LOCAL), 4) == datetime(
        2026, 3, 2, 4, tzinfo=LOCAL
    )


def test_daily_reset_starts_a_new_session_holding_the_triggering_message(home: Path) -> None:
    mgr = manager(home, at_hour=4)
    first = mgr.append(KEY, "user", "late night", datetime(2026, 3, 2, 3, 50, tzinfo=LOCAL))
    same = mgr.append(KEY, "assistant", "still before four", datetime(2026, 3, 2, 3, 59, tzinfo=LOCAL))
    assert first.new_session and first.reason == "created" and not same.new_session
    after = mgr.append(KEY, "user", "good morning", datetime(2026, 3, 2, 4, 1, tzinfo=LOCAL))
    assert after.new_session and after.reason == "daily-reset"
    assert after.previous_session_id == first.session_id != after.session_id
    assert after.message["idx"] == 0
    store = mgr.store
    assert [m["content"] for m in store.read_messages(after.session_id).messages] == ["good morning"]
    assert store.read_meta(first.session_id)["status"] == "archived"
    assert store.current_session_id(KEY) == after.session_id


def test_idle_reset_after_idle_minutes(home: Path) -> None:
    mgr = manager(home, at_hour=None, idle_minutes=30)
    start = datetime(2026, 3, 2, 10, 0, tzinfo=LOCAL)
    first = mgr.append(KEY, "user", "a", start)
    assert not mgr.append(KEY, "user", "b", start + timedelta(minutes=30)).new_session
    late = mgr.append(KEY, "user", "c", start + timedelta(minutes=61))
    assert late.new_session and late.reason == "idle-reset" and late.previous_session_id == first.session_id
    assert [m["content"] for m in mgr.store.read_messages(late.session_id).messages] == ["c"]


def test_sweep_makes_idle_sessions_dormant_and_stale_ones_archived(home: Path) -> None:
    mgr = manager(home, at_hour=4, dormant_minutes=60)
    start = datetime(2026, 3, 2, 10, 0, tzinfo=LOCAL)
    quiet = mgr.append(KEY, "user", "a", start).session_id
    busy = mgr.append("agent:main:main", "user", "b", start + timedelta(minutes=100)).session_id
    changes = mgr.sweep(start + timedelta(minutes=110))
    assert [(c.session_id, c.change) for c in changes] == [(quiet, "dormant")]
    assert mgr.store.read_meta(busy)["status"] == "active"
    back = mgr.append(KEY, "user", "again", start + timedelta(minutes=120))
    assert back.session_id == quiet and not back.new_session
    assert mgr.store.cached_index()["sessions"][KEY]["status"] == "active"
    next_day = mgr.sweep(datetime(2026, 3, 3, 5, 0, tzinfo=LOCAL))
    assert sorted(c.change for c in next_day) == ["archived", "archived"]
    assert mgr.store.read_index()["sessions"] == {}


def test_explicit_new_and_reset(home: Path) -> None:
    mgr = manager(home)
    now = datetime(2026, 3, 2, 10, 0, tzinfo=LOCAL)
    meta, previous = mgr.new(KEY, now)
    assert previous is None
    reset_meta, archived = mgr.reset(KEY, now)
    assert archived == meta["sessionId"] != reset_meta["sessionId"]
    assert mgr.store.read_meta(archived)["status"] == "archived"


def test_get_or_create_from_many_threads_creates_one_session(home: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    mgr = manager(home)
    now = datetime(2026, 3, 2, 10, 0, tzinfo=LOCAL)
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: mgr.get_or_create(KEY, now), range(32)))
    assert len({meta["sessionId"] for meta, _ in results}) == 1
    assert sum(created for _, created in results) == 1


def tool_turn(idx: int, call_id: str, tokens: int) -> list[dict[str, object]]:
    call = {"idx": idx, "role": "assistant", "content": "", "toolCalls": [{"id": call_id}], "tokens": tokens}
    result = {"idx": idx + 1, "role": "tool", "toolCallId": call_id, "content": "r", "tokens": tokens}
    return [call, result]


def test_context_window_keeps_tool_pairs_whole() -> None:
    messages = [
        {"idx": 0, "role": "user", "content": "u0", "tokens": 10},
        *tool_turn(1, "tc-1", 10),
        {"idx": 3, "role": "assistant", "content": "a3", "tokens": 10},
    ]
    assert [m["idx"] for m in build_context(messages, None, None, 30).messages] == [1, 2, 3]
    # 25 tokens fit the last message and half of the tool pair: the pair goes, the window stops.
    context = build_context(messages, None, None, 25)
    assert [m["idx"] for m in context.messages] == [3] and context.tokens == 10 and context.dropped == 3
    orphan = [{"idx": 5, "role": "tool", "toolCallId": "tc-9", "content": "x", "tokens": 1}]
    assert build_context(orphan, None, None, 100).messages == []


def test_context_uses_summary_and_messages_after_checkpoint(home: Path) -> None:
    mgr = manager(home)
    now = datetime(2026, 3, 2, 10, 0, tzinfo=LOCAL)
    session_id = ""
    for i in range(6):
        session_id = mgr.append(KEY, "user", f"message number {i}", now).session_id
    mgr.store.write_summary(session_id, "the user counted to three", 2)
    context = session_context(mgr.store, KEY, 1000)
    assert context.summary == "the user counted to three"
    assert [m["idx"] for m in context.messages] == [3, 4, 5]
    assert context.tokens == context.summary_tokens + sum(m["tokens"] for m in context.messages)
    small = session_context(mgr.store, KEY, context.summary_tokens + 5)
    assert len(small.messages) == 1 and small.tokens <= small.budget


def test_tokens_come_from_litellm_files_without_importing_litellm() -> None:
    # In a fresh interpreter: other tests in this process may have imported litellm for their own reasons.
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from openclaw_cli.sessions.budget.tokens import count_tokens, get_encoding\n"
        "assert get_encoding('cl100k_base') is not None\n"
        "assert get_encoding('o200k_base') is not None\n"
        "print(count_tokens('hello world'), 'litellm' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["2", "False"]


def test_without_encoding_files_counts_fall_back_to_an_estimate(tmp_path: Path) -> None:
    assert estimate_tokens("你好世界") == 4
    assert estimate_tokens("abcdefgh") == 2
    assert get_encoding("p50k_base", directory=tmp_path) is None  # no BPE file there: nothing downloaded
    assert count_tokens("你好世界 abcdefgh", "p50k_base") == estimate_tokens("你好世界 abcdefgh")
