"""Summary compression (seed 000 §2.5) and tool-result pruning (seed 003 §3.4): the planning rules
in-process, the compaction through the agent runtime and `openclaw session compact` as a real process,
the model being the fake server over HTTP."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.agent.runtime import AgentRuntime
from openclaw_cli.core.paths import Home
from openclaw_cli.sessions.budget.context import CompactionRule, plan_compaction, prune_tool_results
from openclaw_cli.sessions.store import SessionStore
from tests import agent_helpers
from tests.agent_helpers import WindowedFakeOpenAI, chat_settings, config_env, tool_call, turn
from tests.conftest import run_cli

# The commands tests/inprocess.py knows to be safe (memory reads and writes, session append/show/list)
# run in this process (the same entry point, without the start-up): these tests are about
# what they print and store, not the process; tests marked real_process keep real processes.
CLI_IN_PROCESS = True

KEY = "agent:main:main"

# The fake model server that enforces a context window, and the scripted model behind it (agent_helpers).
fake, model = agent_helpers.fake, agent_helpers.model


def msg(idx: int, role: str = "user", content: str = "x", **extra: Any) -> dict[str, Any]:
    return {"idx": idx, "role": role, "content": content, "tokens": extra.pop("tokens", 10), **extra}


def call_unit(idx: int, call_id: str, result: str = "r") -> list[dict[str, Any]]:
    calls = [{"id": call_id, "type": "function", "function": {"name": "memory_search", "arguments": "{}"}}]
    return [
        msg(idx, "assistant", "", toolCalls=calls),
        msg(idx + 1, "tool", result, toolCallId=call_id),
    ]


# -- the rules, in-process ------------------------------------------------------------------------------


def test_old_tool_results_are_cut_and_the_current_ones_kept() -> None:
    long = "result " * 200
    messages = [msg(0), *call_unit(1, "a", long), msg(3, "assistant"), msg(4), *call_unit(5, "b", long)]
    pruned = prune_tool_results(messages)
    assert pruned[2]["pruned"] is True and "older tool result cut" in pruned[2]["content"]
    assert pruned[2]["tokens"] < 100
    assert pruned[6]["content"] == long  # answers the current question: whole
    assert messages[2]["content"] == long  # the input is not changed


def test_a_short_old_tool_result_is_left_as_it_is() -> None:
    messages = [msg(0), *call_unit(1, "a", "tiny"), msg(3)]
    assert prune_tool_results(messages)[2]["content"] == "tiny"


def test_the_rule_is_due_past_the_message_threshold() -> None:
    rule = CompactionRule(max_messages=30, ratio=0.75, budget=100_000)
    assert not rule.due([msg(i) for i in range(30)], 0)
    assert rule.due([msg(i) for i in range(31)], 0)


def test_the_rule_is_due_past_its_share_of_the_budget() -> None:
    rule = CompactionRule(max_messages=30, ratio=0.75, budget=1000)
    assert not rule.due([msg(i, tokens=70) for i in range(10)], 50)  # 750 tokens: at the limit
    assert rule.due([msg(i, tokens=70) for i in range(10)], 51)  # the summary counts too


def test_a_plan_keeps_the_recent_tail_and_never_splits_a_tool_unit() -> None:
    messages = [msg(i, "user" if i % 2 == 0 else "assistant") for i in range(10)]
    messages += [msg(10), *call_unit(11, "c"), msg(13, "assistant")]
    rule = CompactionRule(max_messages=8, ratio=0.75, budget=10_000)
    plan = plan_compaction(messages, None, rule)
    assert plan.kept == 4  # half the threshold: the question, the call with its result, the answer
    assert plan.checkpoint == 9
    assert [m["idx"] for m in plan.to_summarise] == list(range(10))


def test_the_kept_tail_starts_with_a_question() -> None:
    messages = [msg(i, "user" if i % 2 == 0 else "assistant") for i in range(10)]
    plan = plan_compaction(messages, None, CompactionRule(max_messages=6, ratio=0.75, budget=10_000))
    assert plan.checkpoint == 7 and plan.kept == 2  # 3 would fit, but 7 is an answer to 6


def test_a_plan_moves_a_tool_unit_whole_rather_than_cutting_it() -> None:
    messages = [msg(i) for i in range(6)] + call_unit(6, "c") + [msg(8)]
    plan = plan_compaction(messages, None, CompactionRule(4, 0.75, 10_000))
    assert plan.kept == 1  # the call and its result (two messages) would pass the tail of 2 with 8
    assert plan.checkpoint == 7  # so they are summarised together: the checkpoint is never between them
    assert [m["idx"] for m in plan.to_summarise] == list(range(8))


def test_a_plan_starts_after_the_checkpoint_and_always_keeps_the_newest_unit() -> None:
    messages = [msg(i) for i in range(5)]
    rule = CompactionRule(2, 0.75, 10_000)
    assert plan_compaction(messages, 3, rule).empty  # one message after the checkpoint: kept
    plan = plan_compaction(messages, 1, rule, last_exchange_only=True)
    assert [m["idx"] for m in plan.to_summarise] == [2, 3] and plan.checkpoint == 3


def test_a_forced_plan_keeps_the_last_exchange_with_its_tool_calls() -> None:
    messages = [msg(0), msg(1, "assistant"), msg(2), *call_unit(3, "c"), msg(5, "assistant")]
    plan = plan_compaction(messages, None, CompactionRule(30, 0.75, 10_000), last_exchange_only=True)
    assert plan.checkpoint == 1 and plan.kept == 4


# -- through the runtime and the fake model -----------------------------------------------------------


def runtime_with(home: Path, fake: WindowedFakeOpenAI, **overrides: Any) -> AgentRuntime:
    return AgentRuntime(Home(home), chat_settings(fake.url, embed_url=fake.url, **overrides))


def store_of(home: Path) -> SessionStore:
    return SessionStore(Home(home), "main")


def context_json(home: Path) -> dict[str, Any]:
    store = store_of(home)
    return store.read_context(store.resolve(KEY))


def session_file(home: Path, name: str) -> Path:
    store = store_of(home)
    return store.session_dir(store.resolve(KEY)) / name


def test_a_long_conversation_is_summarised_and_session_context_shows_the_summary(home, fake, model):
    """The issue: after 35 messages `session context --budget 60` dropped 29 with no summary ever made."""
    rt = runtime_with(home, fake)
    try:
        for n in range(18):
            turn(rt, f"message number {n}")
    finally:
        rt.close()
    assert len(model.summary_requests) == 1  # passed 30 messages once
    saved = context_json(home)
    assert saved["summary"].startswith("SUMMARY(") and isinstance(saved["summaryCheckpoint"], int)
    shown = run_cli(home, "session", "context", KEY, "--budget", "60", "--json", env=config_env(None))
    assert shown.returncode == 0, shown.stderr
    context = shown.json()
    assert context["summary"] == saved["summary"]
    assert all(m["idx"] > saved["summaryCheckpoint"] for m in context["messages"])
    # The turn after the compaction sent the summary in the system prompt.
    last_system = model.agent_requests[-1]["messages"][0]["content"]
    assert "Summary of the earlier conversation" in last_system and saved["summary"] in last_system


def test_compaction_is_also_due_when_the_history_passes_its_share_of_the_budget(home, fake, model):
    rt = runtime_with(home, fake, llm={"contextTokens": 2000})
    try:
        for n in range(8):
            model.replies.append("reply " + "many words " * 80)
            turn(rt, f"question {n}")
    finally:
        rt.close()
    assert model.summary_requests  # well under 30 messages: the budget triggered it
    assert len(store_of(home).read_messages(store_of(home).resolve(KEY)).messages) == 16


def test_compaction_never_rewrites_messages_jsonl(home, fake, model):
    rt = runtime_with(home, fake)
    try:
        for n in range(5):
            turn(rt, f"message {n}")
        before = session_file(home, "messages.jsonl").read_bytes()
        outcome = rt.compact_now("main", KEY)
    finally:
        rt.close()
    assert outcome.compacted and outcome.checkpoint == 7 and outcome.kept == 2
    assert session_file(home, "messages.jsonl").read_bytes() == before
    assert store_of(home).read_meta(store_of(home).resolve(KEY))["summaryCheckpoint"] == 7


def test_the_memory_flush_runs_before_the_summary(home, fake, model):
    rt = runtime_with(home, fake)
    try:
        turn(rt, "FACT my dog is called Pixel")
        for n in range(3):
            turn(rt, f"small talk {n}")
        rt.compact_now("main", KEY)
        texts = [r.l0 for r in rt.services("main").memory.list_records()]
    finally:
        rt.close()
    assert "User: my dog is called Pixel" in texts
    chats = [r.body for r in fake.requests_to("/chat/completions")]
    first_extraction = next(i for i, b in enumerate(chats) if b in model.extraction_requests)
    first_summary = next(i for i, b in enumerate(chats) if b in model.summary_requests)
    assert first_extraction < first_summary
    state = json.loads(session_file(home, "extraction.json").read_text())
    assert state["checkpoint"] >= 6  # everything summarised (0..5) was extracted


def test_a_second_compaction_folds_the_old_summary_in_and_keeps_it_in_history(home, fake, model):
    rt = runtime_with(home, fake)
    try:
        for n in range(4):
            turn(rt, f"first part {n}")
        rt.compact_now("main", KEY)
        first = context_json(home)["summary"]
        for n in range(3):
            turn(rt, f"second part {n}")
        rt.compact_now("main", KEY)
    finally:
        rt.close()
    assert f"Previous summary:\n{first}" in model.summary_requests[-1]["messages"][-1]["content"]
    [row] = [json.loads(line) for line in session_file(home, "summaries.jsonl").read_text().splitlines()]
    assert row["summary"] == first and row["summaryCheckpoint"] == 5
    assert oct(session_file(home, "summaries.jsonl").stat().st_mode & 0o777) == "0o600"


def test_a_context_overflow_flushes_compacts_and_retries_once(home, fake, model):
    rt = runtime_with(home, fake)
    try:
        turn(rt, "FACT I was born in Porto " + "story " * 150)
        for n in range(3):
            turn(rt, f"more talk {n} " + "words " * 150)
        fake.context_chars = 4000  # the history no longer fits; a summary and the last exchange do
        model.replies.append("Answer after compaction.")
        result, _ = turn(rt, "and now?")
        texts = [r.l0 for r in rt.services("main").memory.list_records()]
    finally:
        rt.close()
    assert result.status == "ok" and result.reply == "Answer after compaction."
    assert fake.overflows == 1 and len(model.summary_requests) == 1
    assert any("born in Porto" in text for text in texts)  # flushed before being summarised away
    assert context_json(home)["summary"]


def test_a_context_that_still_overflows_gives_a_clear_error_and_keeps_the_message(home, fake, model):
    rt = runtime_with(home, fake)
    try:
        turn(rt, "hello")
        fake.context_chars = 50  # nothing fits, not even the system prompt
        result, _ = turn(rt, "still there?")
    finally:
        rt.close()
    assert result.status == "error" and "too long" in (result.error or "")
    assert fake.overflows == 2  # tried, compacted, tried once more: no loop
    messages = store_of(home).read_messages(store_of(home).resolve(KEY)).messages
    assert messages[-1]["content"] == "still there?"


def test_compact_as_a_message_summarises_now(home, fake, model):
    rt = runtime_with(home, fake)
    try:
        for n in range(3):
            turn(rt, f"talk {n}")
        result, events = turn(rt, "/compact")
    finally:
        rt.close()
    assert "Compacted: 4 message(s) summarised" in events.of("notice")[0]["text"]
    assert result.status == "ok"
    assert len(store_of(home).read_messages(result.session_id).messages) == 6  # not stored


def test_two_compactions_at_once_fold_each_message_once(home, fake, model):
    rt = runtime_with(home, fake)
    try:
        for n in range(6):
            turn(rt, f"talk {n}")
        outcomes: list[Any] = []
        threads = [
            threading.Thread(target=lambda: outcomes.append(rt.compact_now("main", KEY))) for _ in range(2)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        rt.close()
    assert sorted(o.compacted for o in outcomes) == [False, True]
    assert len(model.summary_requests) == 1


def test_tool_pairs_stay_together_across_a_compaction(home, fake, model):
    rt = runtime_with(home, fake)
    try:
        turn(rt, "hello")
        model.replies += [tool_call("memory_search", {"query": "tea"}), "no tea found"]
        turn(rt, "any tea?")
        outcome = rt.compact_now("main", KEY)
    finally:
        rt.close()
    messages = store_of(home).read_messages(store_of(home).resolve(KEY)).messages
    roles = {m["idx"]: m["role"] for m in messages}
    assert roles[outcome.checkpoint + 1] == "user"  # the checkpoint fell between units
    assert outcome.kept == 4  # the question, the call, its result and the answer


# -- `openclaw session compact`, a real process --------------------------------------------------------


def fill(home: Path, count: int) -> None:
    for n in range(count):
        role = "user" if n % 2 == 0 else "assistant"
        result = run_cli(home, "session", "append", KEY, "--role", role, f"line {n}", env=config_env(None))
        assert result.returncode == 0, result.stderr


def test_session_compact_summarises_and_reports(home, fake, model):
    fill(home, 6)
    env = config_env(fake.url, embed_url=fake.url)
    result = run_cli(home, "session", "compact", KEY, env=env)
    assert result.returncode == 0, result.stderr
    assert "4 message(s) summarised up to #3, 2 kept" in result.stdout
    assert context_json(home)["summary"] == "SUMMARY(4 lines)"
    again = run_cli(home, "session", "compact", KEY, "--json", env=env)
    assert again.returncode == 0, again.stderr
    report = again.json()
    assert report["compacted"] is False and report["reason"] == "nothing-to-compact"
    assert report["checkpoint"] == 3 and report["kept"] == 2


def test_session_compact_without_a_model_says_how_to_configure_one(home):
    fill(home, 6)
    result = run_cli(home, "session", "compact", KEY, env=config_env(None))
    assert result.returncode == 1
    assert "none is configured" in result.stderr and "config set llm.model" in result.stderr
    assert context_json(home)["summary"] is None


def test_session_compact_of_an_unknown_key_fails_cleanly(home):
    result = run_cli(home, "session", "compact", "agent:main:direct:nobody", env=config_env(None))
    assert result.returncode == 1 and "no session for key" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("target", ["../../etc", "s-not-a-real-id", "agent:other:main"])
def test_session_compact_refuses_a_bad_target(home, target):
    result = run_cli(home, "session", "compact", target, env=config_env(None))
    assert result.returncode in (1, 2) and result.stderr.startswith("openclaw: error:"), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_session_compact_when_the_model_is_down(home, fake, model):
    fill(home, 6)
    fake.fail_next(5, status=500)
    result = run_cli(home, "session", "compact", KEY, env=config_env(fake.url, embed_url=fake.url))
    assert result.returncode == 1 and "HTTP 500" in result.stderr
    assert context_json(home)["summary"] is None  # nothing half-written


def test_the_summary_request_fits_the_window_leaving_out_the_oldest() -> None:
    from openclaw_cli.agent.compaction import summary_request

    messages = [msg(i, content=f"m{i} " + "y" * 5000) for i in range(100)]
    body = summary_request("old summary", messages, max_chars=10_000)[-1]["content"]
    assert len(body) < 10_500
    assert "earlier messages left out" in body and "[99] user: m99" in body and "[0] user" not in body
    short = summary_request(None, messages[:3], max_chars=10_000)[-1]["content"]
    assert "left out" not in short and "Previous summary: (none)" in short


def test_session_context_says_how_to_summarise_what_it_dropped(home):
    fill(home, 8)
    result = run_cli(home, "session", "context", KEY, "--budget", "10", env=config_env(None))
    assert result.returncode == 0, result.stderr
    assert f"`openclaw session compact {KEY}`" in result.stdout
