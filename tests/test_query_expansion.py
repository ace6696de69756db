"""Query expansion by the configured model (issue 24): real chat turns in-process, real memory databases
with the packaged local embedder, the fake model over HTTP on loopback answering the expansion requests
as each test scripts them."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.agent.runtime import AgentRuntime
from openclaw_cli.config.loading import InjectSettings, Settings
from openclaw_cli.core.paths import Home
from openclaw_cli.memory import query_expansion
from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.inject import build_memory_block
from openclaw_cli.memory.query_expansion import ModelExpander, expander_for
from openclaw_cli.memory.search.legs import expansion
from tests import agent_helpers
from tests.agent_helpers import ScriptedModel, WindowedFakeOpenAI, chat_settings, tool_call, turn

# The memory commands tests/inprocess.py knows to be safe run in this process: these tests are about
# what they print and store, not about the process; tests marked real_process keep real ones.
CLI_IN_PROCESS = True

fake = agent_helpers.fake

PARAPHRASE = "what look do I want for my code editor?"
DARK_MODE = "User prefers dark mode"
# What a model could answer for PARAPHRASE: the words a stored memory would use.
EXPANSION = json.dumps(
    {"phrasings": ["User prefers a dark or light theme in the code editor", "editor colours"]}
)
ALICE, BOB = "alice", "bob"


@dataclass
class Expansions:
    """What the fake model answers to expansion requests: per query, a reply text or a callable run first
    (to sleep past a timeout); no phrasings for any other query."""

    answers: dict[str, str | Callable[[], str]] = field(default_factory=dict)

    def __call__(self, query: str) -> str:
        answer = self.answers.get(query, '{"phrasings": []}')
        return answer() if callable(answer) else answer


@pytest.fixture(autouse=True)
def fresh_cache() -> Iterator[None]:
    query_expansion.clear_cache()
    yield
    query_expansion.clear_cache()


model = agent_helpers.model


@pytest.fixture
def expansions(fake: WindowedFakeOpenAI) -> Expansions:
    answers = Expansions()
    fake.expand = answers
    return answers


def asked(fake: WindowedFakeOpenAI) -> list[str]:
    """The queries the fake model was asked to expand."""
    return [str(r.body["messages"][-1]["content"]) for r in fake.expansion_requests]


def make_runtime(home: Path, fake: WindowedFakeOpenAI, **memory: Any) -> AgentRuntime:
    # The packaged local embedder (no embed_url): the paraphrase must be missed by the real models.
    return AgentRuntime(Home(home), chat_settings(fake.url, memory=memory))


@pytest.fixture
def runtime(home: Path, fake: WindowedFakeOpenAI, model: ScriptedModel) -> Iterator[AgentRuntime]:
    rt = make_runtime(home, fake)
    try:
        yield rt
    finally:
        rt.close()


def remember(rt: AgentRuntime, text: str, person: str = ALICE) -> str:
    record, _ = rt.services("main").memory.add(NewMemory(l0=text, category="preference", user_id=person))
    return record.id


def prompt_of_last_turn(model: ScriptedModel) -> str:
    return str(model.agent_requests[-1]["messages"][0]["content"])


def ask(rt: AgentRuntime, text: str, person: str = ALICE) -> Any:
    result, _ = turn(rt, text, user_id=person)
    assert result.status == "ok", result.error
    return result


def seed(rt: AgentRuntime) -> str:
    found = remember(rt, DARK_MODE)
    remember(rt, "User's favourite tea is sencha")
    remember(rt, "User lives in Lisbon")
    return found


# -- found through the expansion, in a real turn ------------------------------------------------------


def test_a_paraphrase_is_injected_through_the_models_expansion(runtime, model, fake, expansions):
    wanted = seed(runtime)
    expansions.answers[PARAPHRASE] = EXPANSION
    result = ask(runtime, PARAPHRASE)
    assert DARK_MODE in prompt_of_last_turn(model)
    assert result.memory_ids[0] == wanted
    [request] = fake.expansion_requests
    assert request.body["max_tokens"] == expansion.MAX_TOKENS


def test_without_the_expansion_the_paraphrase_finds_nothing(runtime):
    seed(runtime)
    block = build_memory_block(
        runtime.services("main").memory, InjectSettings(), query=PARAPHRASE, user_id=ALICE
    )
    assert block.text == "" and block.record_ids == []


def test_without_a_model_there_is_no_expander() -> None:
    assert expander_for(Settings()) is None
    off = Settings(llm={"model": "openai/x"}, memory={"queryExpansion": {"enabled": False}})
    assert expander_for(off) is None


def test_the_cheaper_extraction_model_expands_when_one_is_set() -> None:
    found = expander_for(Settings(llm={"model": "openai/big", "extractModel": "openai/small"}))
    assert found is not None and found.model == "openai/small"


def test_the_setting_off_makes_no_call(home, fake, model, expansions):
    rt = make_runtime(home, fake, queryExpansion={"enabled": False})
    try:
        seed(rt)
        expansions.answers[PARAPHRASE] = EXPANSION
        result = ask(rt, PARAPHRASE)
    finally:
        rt.close()
    assert fake.expansion_requests == []
    assert result.memory_ids == [] and DARK_MODE not in prompt_of_last_turn(model)


def test_a_second_identical_query_makes_no_second_call(runtime, model, fake, expansions):
    wanted = seed(runtime)
    expansions.answers[PARAPHRASE] = EXPANSION
    first = ask(runtime, PARAPHRASE)
    second = ask(runtime, PARAPHRASE)
    assert first.memory_ids[0] == second.memory_ids[0] == wanted
    assert asked(fake) == [PARAPHRASE]
    assert len(model.agent_requests) == 2


def test_a_purge_forgets_the_kept_answers_with_the_persons_memories(runtime, model, fake, expansions):
    # The kept answers hold a person's questions and the model's phrasings of them: a purge of anyone
    # drops them all, so the next identical question is asked again.
    seed(runtime)
    expansions.answers[PARAPHRASE] = EXPANSION
    ask(runtime, PARAPHRASE)
    runtime.services("main").memory.purge_user(ALICE)
    ask(runtime, PARAPHRASE)
    assert asked(fake) == [PARAPHRASE, PARAPHRASE]


def test_an_answer_of_no_phrasings_is_kept_too(runtime, model, fake):
    seed(runtime)
    ask(runtime, PARAPHRASE)
    ask(runtime, PARAPHRASE)
    assert asked(fake) == [PARAPHRASE]


def test_a_query_found_locally_makes_no_call(runtime, model, fake, expansions):
    remember(runtime, "User's favourite tea is sencha")
    expansions.answers["which tea is my favourite tea?"] = EXPANSION
    result = ask(runtime, "which tea is my favourite tea?")
    assert fake.expansion_requests == []
    assert len(result.memory_ids) == 1


def test_only_the_query_is_sent_never_a_memory(runtime, model, fake):
    seed(runtime)
    ask(runtime, PARAPHRASE)
    [request] = fake.expansion_requests
    assert request.body["messages"] == expansion.messages(PARAPHRASE)
    sent = json.dumps(request.body, ensure_ascii=False)
    assert "sencha" not in sent and "Lisbon" not in sent and "dark mode" not in sent


def test_the_memory_search_tool_uses_the_expansion(runtime, model, fake, expansions):
    wanted = seed(runtime)
    expansions.answers[PARAPHRASE] = EXPANSION
    model.replies += [tool_call("memory_search", {"query": PARAPHRASE}), "Dark mode."]
    _, events = turn(runtime, "hello there", user_id=ALICE)
    [tool] = events.of("tool")
    assert tool["result"]["results"][0]["id"] == wanted
    assert asked(fake) == [PARAPHRASE]  # the tool's query; "hello there" is not worth a call


# -- person scoping -------------------------------------------------------------------------------------


def test_the_expansion_never_surfaces_another_persons_memory(runtime, model, fake, expansions):
    remember(runtime, DARK_MODE, person=BOB)
    remember(runtime, "User's favourite tea is sencha")
    expansions.answers[PARAPHRASE] = EXPANSION
    result = ask(runtime, PARAPHRASE)
    assert asked(fake) == [PARAPHRASE]  # asked, and its phrasing would match Bob's memory
    assert DARK_MODE not in prompt_of_last_turn(model)
    assert result.memory_ids == []
    bob = ask(runtime, PARAPHRASE, person=BOB)  # the same answer, from the cache, for Bob himself
    assert DARK_MODE in prompt_of_last_turn(model) and len(bob.memory_ids) == 1


# -- failures fall back to the local result -------------------------------------------------------------


def _falls_back(runtime: AgentRuntime, model: ScriptedModel, caplog: pytest.LogCaptureFixture) -> str:
    """A turn asking PARAPHRASE whose expansion fails: the reply comes, nothing is injected, and the log
    has one line about it (its text is returned)."""
    caplog.set_level(logging.WARNING, logger="openclaw.memory")
    seed(runtime)
    model.replies.append("Here is my answer.")
    result = ask(runtime, PARAPHRASE)
    assert result.reply == "Here is my answer."
    assert result.memory_ids == []
    [line] = [r.getMessage() for r in caplog.records if r.name == "openclaw.memory"]
    assert line.startswith("query expansion with openai/fake-chat failed, the local result is used")
    return line


def test_a_model_error_falls_back(runtime, model, fake, caplog):
    fake.fail_next_expansions(1, status=500)
    assert "500" in _falls_back(runtime, model, caplog)


def test_a_timeout_falls_back(home, fake, model, expansions, caplog):
    rt = make_runtime(home, fake, queryExpansion={"timeoutSeconds": 0.3})

    def slow() -> str:
        time.sleep(1.5)
        return EXPANSION

    expansions.answers[PARAPHRASE] = slow
    try:
        assert "timed out" in _falls_back(rt, model, caplog).lower()
    finally:
        rt.close()


def test_malformed_json_falls_back(runtime, model, expansions, caplog):
    expansions.answers[PARAPHRASE] = '{"phrasings": ["User prefers dark'
    assert "not JSON" in _falls_back(runtime, model, caplog)


def test_an_empty_reply_falls_back(runtime, model, expansions, caplog):
    expansions.answers[PARAPHRASE] = ""
    assert "not JSON: ''" in _falls_back(runtime, model, caplog)


def test_a_failure_is_not_kept_the_next_turn_asks_again(runtime, model, fake, expansions, caplog):
    fake.fail_next_expansions(1, status=500)
    _falls_back(runtime, model, caplog)
    expansions.answers[PARAPHRASE] = EXPANSION
    assert ask(runtime, PARAPHRASE).memory_ids != []
    assert asked(fake) == [PARAPHRASE, PARAPHRASE]


# -- a wrong answer does not choose what is injected ---------------------------------------------------


def test_a_phrasing_cannot_bring_in_a_memory_the_query_itself_ranks_low(runtime, model, fake, expansions):
    from openclaw_cli.memory.search.pipeline import SearchRequest
    from tests.evalset import eval_record, load_jsonl

    memory = runtime.services("main").memory
    distractors = [m for m in load_jsonl("distractors.jsonl") if m["userId"] == "u-lin"][:120]
    memory.add_many([eval_record(memory, {**m, "userId": ALICE}) for m in distractors])
    wanted = remember(runtime, DARK_MODE)
    request = SearchRequest(query=PARAPHRASE, k=200, user_id=ALICE, scopes=("user",), all_results=True)
    ranked = [hit.record for hit in memory.search(request).hits]
    assert wanted in [r.id for r in ranked[: expansion.AGREE]]  # the query's meaning points at it, weakly
    far = ranked[-1]  # the memory the query itself ranks last: a model answering about something else
    assert len(ranked) > expansion.AGREE
    expansions.answers[PARAPHRASE] = json.dumps({"phrasings": [far.l0]})
    result = ask(runtime, PARAPHRASE)
    assert asked(fake) == [PARAPHRASE]
    assert far.id not in result.memory_ids
    query_expansion.clear_cache()
    expansions.answers[PARAPHRASE] = EXPANSION  # a model that answers the question
    assert ask(runtime, PARAPHRASE).memory_ids[0] == wanted


# -- nonsense stays empty -------------------------------------------------------------------------------


def _nonsense_queries() -> list[str]:
    root = Path(__file__).resolve().parent.parent / "fixtures" / "eval"
    found = []
    for path in sorted(root.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            item = json.loads(line) if line.strip() else {}
            if item.get("kind") == "nonsense":
                found.append(str(item["query"]))
    return sorted(set(found))


def test_nonsense_stays_empty_though_the_model_would_answer_with_words(runtime, fake):
    seed(runtime)
    words = json.dumps({"phrasings": [DARK_MODE, "User lives in Lisbon", "favourite tea"]})
    fake.expand = lambda query: words  # any query: words that match every memory
    queries = _nonsense_queries()
    assert len(queries) >= 40
    expander = expander_for(runtime.settings)
    assert expander is not None
    memory = runtime.services("main").memory
    for query in queries:
        block = build_memory_block(memory, InjectSettings(), query=query, user_id=ALICE, expander=expander)
        assert block.text == "", query
    assert fake.expansion_requests == []  # none of them is ever sent


def test_real_words_that_mean_nothing_are_sent_and_the_models_no_keeps_them_empty(runtime, model, fake):
    seed(runtime)
    query = "would the purple monkey dishwasher suit me?"
    result = ask(runtime, query)
    assert asked(fake) == [query]
    assert result.memory_ids == []


# -- reading the reply ----------------------------------------------------------------------------------


def test_a_fenced_reply_is_read() -> None:
    assert expansion.parse_reply('```json\n{"phrasings": ["a b"]}\n```') == ("a b",)


def test_at_most_three_phrasings_each_one_line_and_short() -> None:
    reply = json.dumps({"phrasings": ["one\x00\nline", "two", "two", "three", "four", 7]})
    assert expansion.parse_reply(reply) == ("one line", "two", "three")
    long = expansion.parse_reply(json.dumps({"phrasings": ["y" * 500]}))
    assert len(long[0]) == expansion.MAX_PHRASING_CHARS


@pytest.mark.parametrize(
    "reply", ["", "sure: dark mode", "[1, 2]", '{"phrases": ["a"]}', '{"phrasings": "a"}', "null"]
)
def test_a_reply_not_in_the_asked_form_is_refused(reply: str) -> None:
    with pytest.raises(expansion.InvalidExpansion):
        expansion.parse_reply(reply)


def test_the_answers_are_kept_in_a_bounded_lru(fake) -> None:
    ask_model = ModelExpander("openai/fake-chat", fake.url, 5.0, query_expansion.AnswerCache(2))
    for query in ("first question", "second question", "first question", "third question", "second question"):
        ask_model(query)
    # "first" was kept (asked again while held); "second" was the least recent when "third" came.
    assert asked(fake) == ["first question", "second question", "third question", "second question"]


# -- the CLI keeps the local path unless asked ----------------------------------------------------------


def _cli_seed(cli: Any) -> None:
    for text in (DARK_MODE, "User's favourite tea is sencha"):
        assert cli("memory", "add", text, "-c", "preference").returncode == 0


def test_memory_inject_keeps_the_local_path_with_a_model_configured(cli, fake) -> None:
    _cli_seed(cli)
    fake.expand = lambda query: EXPANSION
    result = cli("memory", "inject", "--query", PARAPHRASE, "--local", env=agent_helpers.config_env(fake.url))
    assert result.returncode == 0, result.stderr
    assert "(no memories to inject)" in result.stdout
    assert fake.expansion_requests == []


def test_memory_inject_expand_asks_the_model(cli, fake) -> None:
    _cli_seed(cli)
    fake.expand = lambda query: EXPANSION
    result = cli(
        "memory", "inject", "--query", PARAPHRASE, "--expand", env=agent_helpers.config_env(fake.url)
    )
    assert result.returncode == 0, result.stderr
    assert DARK_MODE in result.stdout
    assert asked(fake) == [PARAPHRASE]


def test_memory_inject_expand_without_a_model_is_a_one_line_error(cli) -> None:
    result = cli("memory", "inject", "--query", PARAPHRASE, "--expand")
    assert result.returncode == 1
    assert (
        result.stderr.startswith("error: --expand needs a model") or "--expand needs a model" in result.stderr
    )
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) <= 2


def test_an_expansion_request_takes_none_of_the_agents_scripted_replies_or_failures(fake) -> None:
    fake.script_chat("the agent's reply")
    fake.fail_next(1, status=500, endpoint="/chat/completions")
    assert ModelExpander("openai/fake-chat", fake.url, 5.0, query_expansion.AnswerCache(4))(PARAPHRASE) == ()
    assert len(fake.expansion_requests) == 1 and fake.requests == []


# -- fusing ---------------------------------------------------------------------------------------------


def _hit(record_id: str, score: float) -> Any:
    from openclaw_cli.memory.search.pipeline import Candidate, SearchHit
    from openclaw_cli.memory.store.record_rows import new_record

    record = new_record(
        record_id=record_id, l0="x", agent_id="main", scope="user", user_id=ALICE, category="preference"
    )
    return SearchHit(record, Candidate(rowid=0, score=score))


def test_the_users_own_words_win_at_equal_strength() -> None:
    own = [_hit("mem-own", 0.6)]
    through_phrasings = [[_hit("mem-phrased", 0.6), _hit("mem-own", 0.9)]]
    agreed = {"mem-own", "mem-phrased"}
    fused = expansion.fuse(own, through_phrasings, 10, agreed)
    assert [(hit.record.id, round(hit.candidate.score, 2)) for hit in fused] == [
        ("mem-own", 0.72),  # its better score, through a phrasing: 0.9 x 0.8
        ("mem-phrased", 0.48),
    ]
    assert len(expansion.fuse(own, through_phrasings, 1, agreed)) == 1
    assert [hit.record.id for hit in expansion.fuse(own, through_phrasings, 10, {"mem-own"})] == ["mem-own"]


def test_openclaw_chat_local_injects_the_paraphrase_found_through_the_expansion(cli, fake, model) -> None:
    _cli_seed(cli)
    fake.expand = lambda query: EXPANSION if query == PARAPHRASE else '{"phrasings": []}'
    model.replies.append("Dark mode, as always.")
    result = cli("chat", "--local", input=PARAPHRASE + "\n", env=agent_helpers.config_env(fake.url))
    assert result.returncode == 0, result.stderr
    assert "Dark mode, as always." in result.stdout
    assert asked(fake) == [PARAPHRASE]
    assert DARK_MODE in prompt_of_last_turn(model)


def test_the_expansion_calls_tokens_count_in_the_turns_usage(runtime, model, fake, expansions):
    from tests.fake_openai import chat_usage

    seed(runtime)
    expansions.answers[PARAPHRASE] = EXPANSION
    result = ask(runtime, PARAPHRASE)
    [asked_for] = fake.expansion_requests
    spent = chat_usage(asked_for.body, {"role": "assistant", "content": EXPANSION})
    chat = [usage for body, usage in fake.usages]
    assert result.usage is not None
    assert result.usage.prompt_tokens == spent["prompt_tokens"] + sum(u["prompt_tokens"] for u in chat)
    assert result.usage.completion_tokens == spent["completion_tokens"] + sum(
        u["completion_tokens"] for u in chat
    )
    # A second turn asking the same finds the answer kept: no call, nothing more counted.
    again = ask(runtime, PARAPHRASE)
    assert len(fake.expansion_requests) == 1
    assert again.usage is not None and again.usage.prompt_tokens == sum(
        u["prompt_tokens"] for body, u in fake.usages[len(chat) :]
    )
