"""Importance pruning (seed 000 §2.5, issue 53): the scoring rules in both languages, the selection's
guarantees (whole tool units, the recent turns, the original order, the summary), the setting through
the real CLI, the eval on the report half, and a turn against the fake model under each strategy."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.agent.context import assemble
from openclaw_cli.agent.runtime import AgentRuntime
from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.core.paths import Home
from openclaw_cli.sessions.budget.context import build_context
from openclaw_cli.sessions.budget.importance import categories, score_text, select_units
from openclaw_cli.sessions.lifecycle import SessionManager
from openclaw_cli.sessions.store import SessionStore
from tests import agent_helpers, importance_eval
from tests.agent_helpers import ScriptedModel, WindowedFakeOpenAI, chat_settings, turn
from tests.conftest import Result

fake, model = agent_helpers.fake, agent_helpers.model
KEY = "agent:main:main"


# -- the rules --------------------------------------------------------------------------------------------

SMALL_TALK = ["ok", "Thanks!", "haha", "hahaha", "good morning", "hey there", "lol same", "好的", "嗯嗯",
              "哈哈哈", "谢谢你", "早上好", "收到～"]  # fmt: skip
INSTRUCTIONS = ["From now on, always answer in bullet points.", "Don't book anything before 9 on weekdays.",
                "以后回答都用要点列表。", "不要在早上九点前给我安排会议。"]  # fmt: skip
DECISIONS = ["We decided to go with PostgreSQL for the backend.", "Let's go with the blue one, final.",
             "数据库就选SQLite了，定了。", "我们决定下个月搬家。"]  # fmt: skip
FACTS = {
    "my X is Y": "My sister's name is Priya.",
    "a name": "Oh btw, Kenji is my brother.",
    "a date": "Our anniversary is October 14.",
    "a place": "We moved to Valencia last spring.",
    "a number": "The code for my locker is 4471.",
    "我的…是": "我的车牌号是浙A12345。",
    "我叫": "我叫王蕾。",
    "一个日期": "我女儿十月三号过生日。",
    "一个地方": "我住在杭州西湖区。",
}
NEUTRAL = ["Can you explain how a hash map works?", "解释一下什么是哈希表。"]


@pytest.mark.parametrize("text", SMALL_TALK)
def test_small_talk_scores_nothing(text: str) -> None:
    assert categories(text) == {"small-talk"}
    assert score_text("user", text) == 0.0


@pytest.mark.parametrize("text", INSTRUCTIONS)
def test_an_instruction_outscores_neutral_talk_and_small_talk(text: str) -> None:
    assert "instruction" in categories(text)
    assert score_text("user", text) > max(score_text("user", n) for n in NEUTRAL) > 0


@pytest.mark.parametrize("text", DECISIONS)
def test_a_decision_outscores_neutral_talk(text: str) -> None:
    assert "decision" in categories(text)
    assert score_text("user", text) > max(score_text("user", n) for n in NEUTRAL)


@pytest.mark.parametrize("kind", sorted(FACTS))
def test_a_fact_about_the_person_outscores_neutral_talk(kind: str) -> None:
    text = FACTS[kind]
    assert categories(text) & {"personal", "specific"}, kind
    assert score_text("user", text) > max(score_text("user", n) for n in NEUTRAL), kind


def test_the_assistants_advice_is_no_standing_instruction() -> None:
    advice = "Don't cut the bread while it is hot."
    assert score_text("assistant", advice) < score_text("user", advice)
    assert score_text("assistant", advice) < score_text("user", "Don't ever call me before 9.")


def test_asking_about_a_fact_scores_less_than_stating_it() -> None:
    assert score_text("user", "What's my sister's name?") < score_text("user", "My sister's name is Priya.")
    assert score_text("user", "我姐姐叫什么？") < score_text("user", "我姐姐叫林晓。")


# -- the selection ------------------------------------------------------------------------------------------


def msg(idx: int, role: str, content: str, tokens: int = 10, **extra: Any) -> dict[str, Any]:
    return {"idx": idx, "role": role, "content": content, "tokens": tokens, **extra}


def tool_unit(idx: int, call_id: str, result: str, tokens: int = 10) -> list[dict[str, Any]]:
    call = [{"id": call_id, "type": "function", "function": {"name": "memory_search", "arguments": "{}"}}]
    return [msg(idx, "assistant", "", tokens, toolCalls=call), msg(idx + 1, "tool", result, tokens, toolCallId=call_id)]  # fmt: skip


def conversation() -> list[dict[str, Any]]:
    """A fact first, then small talk, a tool unit and task talk, then the recent turns."""
    messages = [msg(0, "user", "My sister's name is Priya."), msg(1, "assistant", "Noted.")]
    for i in range(2, 12, 2):
        messages += [msg(i, "user", "haha"), msg(i + 1, "assistant", "Glad to help!")]
    messages += [msg(12, "user", "Find my notes about the trip to Lisbon.")]
    messages += tool_unit(13, "c1", "Note: the trip to Lisbon is on 3 May, hotel booked.", tokens=30)
    messages += [msg(15, "assistant", "You go to Lisbon on 3 May.")]
    for i in range(16, 24, 2):
        messages += [msg(i, "user", f"question {i} about cooking"), msg(i + 1, "assistant", f"answer {i}")]
    return messages


def ids(context_messages: list[dict[str, Any]]) -> list[int]:
    return [int(m["idx"]) for m in context_messages]


def test_sliding_is_the_default_and_drops_the_oldest_whatever_they_said() -> None:
    messages = conversation()
    default = build_context(messages, None, None, 120)
    assert ids(default.messages) == ids(build_context(messages, None, None, 120, strategy="sliding").messages)
    assert 0 not in ids(default.messages)


def test_importance_keeps_the_fact_past_the_small_talk_in_order_with_the_recent_turns() -> None:
    messages = conversation()
    context = build_context(messages, None, None, 120, strategy="importance", keep_recent_turns=4)
    kept = ids(context.messages)
    assert 0 in kept  # the sister's name
    assert set(range(16, 24)) <= set(kept)  # the last four turns, whole
    assert kept == sorted(kept)  # the original order
    assert not {2, 4, 6, 8, 10} & set(kept)  # "haha" went first
    assert context.tokens <= 120 and context.dropped == len(messages) - len(kept)


def test_a_tool_call_and_its_results_stay_or_go_together() -> None:
    messages = conversation()
    for budget in range(0, 260, 5):
        kept = ids(build_context(messages, None, None, budget, strategy="importance").messages)
        assert (13 in kept) == (14 in kept), budget
    two_results = (
        [msg(0, "user", "look it up")]
        + tool_unit(1, "a", "first 4471")
        + [msg(3, "tool", "second 2309", toolCallId="a")]
    )
    two_results[1]["toolCalls"].append({"id": "a2", "type": "function", "function": {"name": "x"}})
    recent = [msg(4, "user", "ok thanks"), msg(5, "assistant", "sure"), msg(6, "user", "and now?")]
    for budget in range(0, 80, 5):
        kept = set(ids(build_context(two_results + recent, None, None, budget, strategy="importance",
                                     keep_recent_turns=1).messages))  # fmt: skip
        assert kept & {1, 2, 3} in (set(), {1, 2, 3}), budget


def test_the_recent_turns_come_first_even_over_an_important_old_message() -> None:
    messages = conversation()
    context = build_context(messages, None, None, 80, strategy="importance", keep_recent_turns=4)
    assert ids(context.messages) == list(range(16, 24))  # exactly the four turns fit: nothing older


def test_when_the_recent_turns_do_not_fit_the_newest_are_kept_as_sliding_would() -> None:
    messages = conversation()
    sliding = ids(build_context(messages, None, None, 45).messages)
    importance = ids(build_context(messages, None, None, 45, strategy="importance").messages)
    assert sliding == [20, 21, 22, 23]
    assert importance[-4:] == sliding and importance == sorted(importance)


def test_at_every_budget_the_kept_messages_fit_in_order_and_everything_fits_alike() -> None:
    messages = conversation()
    total = sum(m["tokens"] for m in messages)
    for budget in range(0, total + 20, 7):
        context = build_context(messages, None, None, budget, strategy="importance")
        kept = ids(context.messages)
        assert kept == sorted(kept) and context.tokens <= budget, budget
        assert context.tokens == sum(m["tokens"] for m in context.messages), budget
        if budget >= total:
            assert context.messages == build_context(messages, None, None, budget).messages


def test_select_units_fills_with_the_highest_scores_newest_first_on_a_tie() -> None:
    costs, starts = [10, 10, 10, 10, 10], [True, True, True, True, True]
    assert select_units(costs, [5.0, 1.0, 5.0, 0.0, 1.0], starts, 30, 1) == [0, 2, 4]
    assert select_units(costs, [1.0, 1.0, 1.0, 1.0, 1.0], starts, 30, 1) == [2, 3, 4]


def test_only_the_messages_after_the_summary_are_chosen_from() -> None:
    messages = conversation()
    context = build_context(messages, "SUMMARY of the first part", 11, 200, strategy="importance")
    assert context.summary == "SUMMARY of the first part"
    assert min(ids(context.messages)) > 11


def test_the_prompt_starts_with_a_question_and_sends_the_one_being_answered() -> None:
    messages = conversation() + [msg(24, "user", "and what's my sister called?")]
    prompt = assemble("system", messages, None, None, 130, strategy="importance")
    assert prompt.history[0]["role"] == "user"
    assert prompt.history[-1]["idx"] == 24 and prompt.history[0]["idx"] == 0
    tiny = assemble("system", messages, None, None, 5, strategy="importance")
    assert ids(tiny.history) == [24]  # past the budget, the question is still sent


def test_an_unknown_strategy_is_refused() -> None:
    with pytest.raises(InvalidInput, match="sliding or importance"):
        build_context(conversation(), None, None, 100, strategy="newest")


# -- the eval (fixtures/importance, report half) ------------------------------------------------------------


def test_importance_keeps_at_least_as_many_facts_as_sliding_on_the_report_half() -> None:
    results = importance_eval.table("report")
    conversations = importance_eval.load("report")
    assert len(conversations) >= 20 and {c.lang for c in conversations} == {"en", "zh"}
    gained = 0
    for budget in importance_eval.BUDGETS:
        for lang in ("en", "zh"):
            sliding, asked = results[(lang, budget, "sliding")]
            importance, _ = results[(lang, budget, "importance")]
            assert importance >= sliding, (lang, budget, sliding, importance)
            gained += importance - sliding
            assert asked == sum(len(c.probes) for c in conversations if c.lang == lang)
    assert gained > 0


def test_the_fixture_is_what_the_generator_writes() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "gen_importance", Path(__file__).resolve().parent.parent / "tools" / "gen_importance_conversations.py"
    )
    assert spec is not None and spec.loader is not None
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    written = [json.loads(line) for line in importance_eval.CONVERSATIONS.read_text("utf-8").splitlines()]
    assert written == generator.build()


# -- the setting, through the real CLI ----------------------------------------------------------------------


def _one_line_error(result: Result, *needles: str) -> None:
    assert result.returncode == 1, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("openclaw: error: "), result.stderr
    assert "Traceback" not in result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


def test_the_setting_is_read_and_a_bad_value_is_a_one_line_error(cli, home: Path) -> None:
    assert cli("config", "get", "session.context.pruneStrategy", "--json").json()["value"] == "sliding"
    assert cli("config", "set", "session.context.pruneStrategy", "importance").returncode == 0
    assert cli("config", "show", "--json").json()["session"]["context"]["pruneStrategy"] == "importance"
    before = (home / "openclaw.json").read_bytes()
    _one_line_error(cli("config", "set", "session.context.pruneStrategy", "smart"), "pruneStrategy")
    assert (home / "openclaw.json").read_bytes() == before
    (home / "openclaw.json").write_text('{"session": {"context": {"keepRecentTurns": 0}}}')
    _one_line_error(cli("config", "show"), "session.context.keepRecentTurns")
    (home / "openclaw.json").write_text('{"session": {"context": {"pruneStrategy": "newest"}}}')
    _one_line_error(cli("config", "show"), "session.context.pruneStrategy")


# -- a turn against the fake model ----------------------------------------------------------------------


# The history's room the test is built for: what 1,200 context tokens left when the tool schemas took 473.
# A tool added later must not shrink it (the schemas are counted against the context, agent/context.py).
HISTORY_ROOM_TOKENS = 1200 - 473


def _runtime(home: Path, fake: WindowedFakeOpenAI, strategy: str) -> AgentRuntime:
    import json

    from openclaw_cli.agent.tools.builtin import tool_specs
    from openclaw_cli.sessions.budget.tokens import count_tokens

    context = HISTORY_ROOM_TOKENS + count_tokens(json.dumps(list(tool_specs())))
    settings = chat_settings(
        fake.url, embed_url=fake.url, llm={"contextTokens": context}, session={"context": {"pruneStrategy": strategy}}
    )  # fmt: skip
    return AgentRuntime(Home(home), settings)


def _history(home: Path) -> None:
    """A conversation whose first line is a fact, followed by small talk and long task talk."""
    manager = SessionManager(SessionStore(Home(home), "main"))
    now = datetime.now(UTC)
    lines = [("user", "My sister's name is Priya."), ("assistant", "Noted.")]
    for n in range(8):
        lines += [("user", "haha"), ("assistant", "Glad to help!")]
        lines += [("user", f"Tell me about bread, part {n}."), ("assistant", "Flour water salt yeast. " * 25)]
    for role, content in lines:
        manager.append(KEY, role, content, now, user_id="default")
    manager.store.close()


@pytest.mark.parametrize("strategy", ["sliding", "importance"])
def test_what_the_model_receives_under_each_strategy(
    tmp_path: Path, fake: WindowedFakeOpenAI, model: ScriptedModel, strategy: str
) -> None:
    home = tmp_path / "home"
    _history(home)
    # The memory flush and the summary fail (the model is down for them): the history must be trimmed.
    fake.fail_next(2, 500, endpoint="/chat/completions")
    runtime = _runtime(home, fake, strategy)
    try:
        result, events = turn(runtime, "What's my sister called?")
    finally:
        runtime.close()
    assert result.status == "ok", result.error
    assert not model.summary_requests
    sent = model.agent_requests[-1]["messages"][1:]
    texts = [str(m.get("content")) for m in sent]
    assert texts[-1] == "What's my sister called?"
    assert sent[0]["role"] == "user"
    assert texts[-5:-1] == [
        "haha",
        "Glad to help!",
        "Tell me about bread, part 7.",
        "Flour water salt yeast. " * 25,
    ]
    assert len(sent) < 35  # the history was trimmed
    if strategy == "importance":
        assert texts[0] == "My sister's name is Priya."
        assert texts.count("haha") < 8  # small talk went before the fact
    else:
        assert "My sister's name is Priya." not in texts


def test_session_context_shows_each_strategy_and_refuses_an_unknown_one(cli, home: Path) -> None:
    _history(home)
    sliding = cli("session", "context", KEY, "--budget", "400", "--json").json()
    importance = cli(
        "session", "context", KEY, "--budget", "400", "--strategy", "importance", "--json"
    ).json()
    assert sliding["strategy"] == "sliding" and importance["strategy"] == "importance"
    assert "My sister's name is Priya." not in [m["content"] for m in sliding["messages"]]
    assert importance["messages"][0]["content"] == "My sister's name is Priya."
    assert importance["tokens"] <= 400 and importance["messages"][-1] == sliding["messages"][-1]
    (home / "openclaw.json").write_text('{"session": {"context": {"pruneStrategy": "importance"}}}')
    configured = cli("session", "context", KEY, "--budget", "400")
    assert configured.returncode == 0 and "(importance)" in configured.stdout
    assert "My sister's name is Priya." in configured.stdout
    _one_line_error(
        cli("session", "context", KEY, "--budget", "400", "--strategy", "newest"), "sliding or importance"
    )


def test_compaction_still_runs_under_importance_and_the_summary_is_sent(
    tmp_path: Path, fake: WindowedFakeOpenAI, model: ScriptedModel
) -> None:
    home = tmp_path / "home"
    _history(home)
    runtime = _runtime(home, fake, "importance")
    try:
        result, _ = turn(runtime, "What's my sister called?")
    finally:
        runtime.close()
    assert result.status == "ok" and result.compacted
    assert len(model.summary_requests) == 1
    system = model.agent_requests[-1]["messages"][0]["content"]
    assert "## Summary of the earlier conversation\n\nSUMMARY(" in system
    store = SessionStore(Home(home), "main")
    checkpoint = json.loads((store.session_dir(store.resolve(KEY)) / "context.json").read_text())[
        "summaryCheckpoint"
    ]
    sent = [str(m.get("content")) for m in model.agent_requests[-1]["messages"][1:]]
    stored = [
        str(m["content"]) for m in store.read_messages(store.resolve(KEY)).messages if m["idx"] > checkpoint
    ]
    assert (
        sent == stored[: len(sent)] and sent[-1] == "What's my sister called?"
    )  # only what follows the summary
