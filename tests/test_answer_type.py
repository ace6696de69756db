"""What kind of answer a question asks for (answer_type.py), and what search does with it, on real stores."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import pytest

from openclaw_cli.config.loading import SearchSettings
from openclaw_cli.memory.agent_memory import NewMemory
from openclaw_cli.memory.search.context_stages.answer_type import asked_for, could_answer
from openclaw_cli.memory.search.pipeline import HybridSearcher, SearchRequest
from openclaw_cli.memory.service import MemoryService
from tests.conftest import run_cli
from tests.memory_helpers import service_for


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("when is my sister's wedding?", "time"),
        ("When did he move to Hangzhou", "time"),
        ("where are they going on their honeymoon and when?", "time"),
        ("which day is the dentist appointment", "time"),
        ("what did I say about the wedding date?", "time"),
        ("我妹妹的婚礼是哪天？", "time"),
        ("丈母娘什么时候回长沙", "time"),
        ("拔智齿约在几号", "time"),
        ("how many guests are coming to dinner?", "quantity"),
        ("how much did the suit cost", "quantity"),
        ("朵朵几岁了", "quantity"),
        ("相框多大", "quantity"),
        ("what's our hotel budget in Bangkok?", "quantity"),
        ("what was the price of the tickets", "quantity"),
        ("how long have I had these running shoes", "span"),
        ("how often does he run", "span"),
        ("旧跑鞋穿了多久了？", "span"),
        ("where is the Hunan restaurant", "place"),
        ("Where do I go for physiotherapy?", "place"),
        ("which hotel am I staying at in Singapore?", "place"),
        ("那家湘菜馆在哪里？", "place"),
        ("婚礼那次住的哪家酒店？", "place"),
        ("which tailor did I want for the suit fitting?", "name"),
        ("which editor does he use", "name"),
        ("what is the title of the postmortem?", "name"),
        ("what's my partner's name?", "name"),
        ("which budget app do I use", "name"),  # a name, although "budget" is in the question
        ("新公司叫什么？", "name"),
        ("跑鞋是哪个牌子", "name"),
    ],
)
def test_questions_that_ask_for_a_kind_of_answer(query: str, kind: str) -> None:
    assert asked_for(query) == kind


@pytest.mark.parametrize(
    "query",
    [
        "what did I say when we met",  # "when" as a conjunction
        "what does he think of Neovim",
        "which colour theme does he like in his editor",  # a kind of thing: answered by a plain word
        "update the wedding plan",  # "date" only inside a word
        "编辑器快捷键偏好",
        "the town where she grew up",  # "where" as a conjunction
        "what did he say about the move",
        "",
    ],
)
def test_other_queries_ask_for_no_kind(query: str) -> None:
    assert asked_for(query) is None


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("time", "The wedding is on October 11 in Shenzhen."),
        ("time", "Back on Sunday the 19th."),
        ("time", "The standup moved to 9:30am."),
        ("time", "She's coming in two weeks."),
        ("time", "婚礼改到10月18号了。"),
        ("time", "那就下周二上午。"),
        ("time", "元旦去天文馆。"),
        ("quantity", "Eight people on the team now."),
        ("quantity", "买了，原木色的，60乘90。"),
        ("quantity", "膝盖现在能跑十公里了。"),
        ("quantity", "已经跑了一千多公里了。"),
        ("span", "Runs every morning along the river."),
        ("span", "每周跑步三次。"),
        ("place", "User: Different venue, now it's the Futian Shangri-La."),
        ("place", "There's a place on Wensan Road that did my wife's dress."),
        ("place", "在星光大道那边，三楼。"),
        ("place", "老婆已经约了天目里那家，12月3号下午。"),
        ("name", "User: There's a place on Wensan Road that did my wife's dress, Lao Chen Tailor."),
        ("name", "User: 准备换 Hoka Clifton 9。"),
        ("name", 'User: "Payout worker stalled by an unbounded bank API call".'),
        ("name", "其实叫费大厨辣椒炒肉。"),
    ],
)
def test_memories_that_hold_that_kind(kind: str, text: str) -> None:
    assert could_answer(kind, text)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("time", "About the wedding speech: I'm giving a short one."),
        ("time", "丈母娘说想去灵隐寺。"),
        ("quantity", "Prefers dark themes in every editor."),
        ("quantity", "先不用。提醒我元旦去天文馆的事情。"),  # a date is not a number of days
        ("place", "User: About the wedding speech: I'm giving a short one."),
        ("place", "走之前想带她去拍一套全家福。"),
        ("name", "User: Suit. My old suit doesn't fit anymore, haha."),
        ("name", "Prefers dark themes in every editor."),
    ],
)
def test_memories_that_hold_none(kind: str, text: str) -> None:
    assert not could_answer(kind, text)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------- search

NOW = datetime(2026, 3, 1, tzinfo=UTC)

TURNS = [
    "User: About my sister's wedding, I'm supposed to give a short wedding speech as her brother.",
    "Assistant: Lovely. When is the wedding?",
    "User: October 11, in Shenzhen.",
    "User: My sister's wedding dress came from a tailor on Wensan Road.",
]


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryService]:
    svc = service_for(Path(tmp_path_factory.mktemp("answers")))
    for index, text in enumerate(TURNS, start=1):
        session = "s-1" if index <= 3 else "s-2"
        svc.add(NewMemory(l0=text, category="event", source={"sessionId": session, "messages": [index]}))
    yield svc
    svc.close()


def _ranked(service: MemoryService, query: str, settings: SearchSettings | None = None) -> list[str]:
    store = next(iter(service.existing_stores()))
    searcher = HybridSearcher(store, settings or SearchSettings(), service.embedder(), warm=True)
    return [hit.record.l0 for hit in searcher.search(SearchRequest(query, k=5, all_results=True), NOW).hits]


def test_the_turn_with_the_date_answers_when(service: MemoryService) -> None:
    # The turns that name the wedding share more words with the question; the one with the date answers it.
    assert _ranked(service, "我妹妹的婚礼是哪天？")[0] == "User: October 11, in Shenzhen."
    # In English the first turn matches the question almost word for word (relevance 0.96, x0.7 = 0.67)
    # while the date turn shares no word and has only what the question before it lends (0.6 x 0.99):
    # it passes the dress turn, which names the wedding but holds no time, not that one.
    ranked = _ranked(service, "when is my sister's wedding?")
    assert ranked.index("User: October 11, in Shenzhen.") < ranked.index(TURNS[3])


DINNER = [
    "User: The team dinner after the launch is on Friday, everyone is invited.",
    "User: The team dinner budget is 200 yuan per person.",
    "Assistant: Sounds fun. Do you know the venue yet?",
    "User: Jumbo Seafood by the river.",
]


@contextmanager
def _dialogue(home: Path, turns: list[str]) -> Iterator[MemoryService]:
    """A store holding `turns` as one conversation, one memory per message."""
    svc = service_for(home)
    for index, text in enumerate(turns, start=1):
        svc.add(NewMemory(l0=text, category="event", source={"sessionId": "s-9", "messages": [index]}))
    try:
        yield svc
    finally:
        svc.close()


def test_the_turn_with_the_place_answers_where(tmp_path: Path) -> None:
    with _dialogue(tmp_path, DINNER) as svc:
        # The budget names the dinner but no place: it falls below the venue, which it outranks unweighed.
        on = _ranked(svc, "团队聚餐在哪里？")
        off = _ranked(svc, "团队聚餐在哪里？", SearchSettings(answer_kind_factor=1.0))
        assert on.index(DINNER[3]) < on.index(DINNER[1])
        assert off.index(DINNER[3]) > off.index(DINNER[1])
        result = svc.search(SearchRequest("where is the team dinner?", explain=True, all_results=True))
        marked = {hit.record.l0: hit.candidate.context.get("answerKind") for hit in result.hits}
        assert marked[DINNER[1]] == pytest.approx(0.7)
        assert marked[DINNER[3]] is None and marked[DINNER[0]] is None  # "Friday": a name, read generously


TAILOR = [
    "User: I still need a tailor for the suit fitting before the wedding.",
    "Assistant: Do you have one in mind?",
    "User: Lao Chen Tailor, the one that made my wife's dress.",
    "User: The suit fitting should take about an hour.",
]


def test_the_turn_with_the_name_answers_which(tmp_path: Path) -> None:
    with _dialogue(tmp_path, TAILOR) as svc:
        # The turn asking for a tailor shares the most words; the one naming the tailor answers.
        question = "which tailor did I pick for the suit fitting?"
        assert _ranked(svc, question)[0] == TAILOR[2]
        assert _ranked(svc, question, SearchSettings(answer_kind_factor=1.0))[0] == TAILOR[0]


def test_the_factor_is_a_setting_and_1_turns_it_off(service: MemoryService) -> None:
    off = _ranked(service, "when is my sister's wedding?", SearchSettings(answer_kind_factor=1.0))
    assert off[0] != "User: October 11, in Shenzhen."


def test_a_query_that_asks_for_no_kind_is_left_alone(service: MemoryService) -> None:
    on = _ranked(service, "my sister's wedding speech")
    off = _ranked(service, "my sister's wedding speech", SearchSettings(answer_kind_factor=1.0))
    assert on == off


def test_explain_shows_the_factor(service: MemoryService) -> None:
    result = service.search(SearchRequest("when is my sister's wedding?", explain=True, all_results=True))
    marked = {hit.record.l0: hit.candidate.context.get("answerKind") for hit in result.hits}
    assert marked["User: October 11, in Shenzhen."] is None
    assert marked[TURNS[3]] == pytest.approx(0.7)


def test_explain_in_the_cli_names_the_factor(tmp_path: Path) -> None:
    # One process for the four (each `memory add` process loads both models): the subject is the search.
    lines = "".join(json.dumps({"text": text, "category": "event"}) + "\n" for text in TURNS)
    result = run_cli(tmp_path, "memory", "add", "--batch", "-", input=lines)
    assert result.returncode == 0, result.stderr
    result = run_cli(tmp_path, "memory", "search", "when is my sister's wedding?", "--explain", "--all")
    assert result.returncode == 0, result.stderr
    assert (
        "× 0.70 holds no time, quantity, place or name of the kind the question asks for → " in result.stdout
    )
