"""`memory search --explain` a person can read: the words as typed with their stems, a relevance formula
that adds up, each stage's factor with its reason; `--json` carries the same fields by name."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from openclaw_cli.memory.search.explain.data import INDEPENDENT, query_words
from tests.conftest import Result, run_cli

MEMORIES = [
    "User: My coworker Kevin likes strong coffee",
    "Prefers pour-over coffee every morning",
    "Assistant: Do you like coffee?",
    "用户更喜欢用Vim键位的编辑器",
]
QUERY = "what kind of coffee does he like"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("explain")
    # One process for the five (each `memory add` process loads both models): the subject is the search.
    lines = "".join(json.dumps({"text": text}, ensure_ascii=False) + "\n" for text in MEMORIES)
    added = run_cli(home, "memory", "add", "--batch", "-", input=lines)
    assert added.returncode == 0, added.stderr
    return home


@pytest.fixture(scope="module")
def text_run(home: Path) -> Result:
    result = run_cli(home, "memory", "search", QUERY, "--explain", "--all")
    assert result.returncode == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def json_run(home: Path) -> dict:  # type: ignore[type-arg]
    result = run_cli(home, "memory", "search", QUERY, "--explain", "--all", "--json")
    assert result.returncode == 0, result.stderr
    return result.json()  # type: ignore[no-any-return]


def test_words_are_shown_as_typed_with_stems_where_they_differ(text_run: Result) -> None:
    words = next(line for line in text_run.stdout.splitlines() if line.startswith("words: "))
    assert "coffee (coffe)" in words
    assert re.search(r"\blike\b", words)
    assert "coffe," not in words.replace("coffee (coffe)", "")  # no bare stem in place of the word


def test_a_chinese_word_is_shown_whole_with_its_pairs() -> None:
    searched, left_out = query_words("我用什么编辑器", ["我用", "编辑", "编辑器", "辑器"])
    assert {"typed": "编辑器", "terms": ["编辑", "编辑器", "辑器"]} in searched
    assert left_out == ["什么"]


FORMULA = re.compile(
    r"relevance (?P<r>[\d.]+) = 1 − \(1 − keywords (?P<k>[\d.]+)\)\(1 − meaning (?P<m>[\d.]+)\)"
)


def test_the_relevance_formula_adds_up(text_run: Result) -> None:
    formulas = [FORMULA.search(line) for line in text_run.stdout.splitlines()]
    found = [m for m in formulas if m]
    assert len(found) == len(MEMORIES)
    for m in found:
        k, s, r = float(m["k"]), float(m["m"]), float(m["r"])
        assert abs((1 - (1 - k) * (1 - s)) - r) <= 0.011  # each shown to two places


def test_each_stage_shows_its_factor_reason_and_what_it_left(text_run: Result) -> None:
    out = text_run.stdout
    assert re.search(r"× 0\.50 only asks → [\d.]+", out)
    assert re.search(r"× 0\.40 said by the assistant → [\d.]+", out)
    assert re.search(r"× 0\.50 about someone the query does not name → [\d.]+", out)  # a turn: ×0.5


def test_json_carries_the_same_fields_by_name(json_run: dict) -> None:  # type: ignore[type-arg]
    analysis = json_run["analysis"]
    assert {"typed": "coffee", "terms": ["coffe"]} in analysis["words"]
    for hit in json_run["results"]:
        e = hit["explain"]
        fusion = e["fusion"]
        assert fusion["formula"] == INDEPENDENT
        assert fusion["relevance"] == pytest.approx(
            1 - (1 - fusion["keywords"]) * (1 - fusion["meaning"]), abs=1e-3
        )
        relevance = fusion["relevance"]
        for step in e["stages"]:
            assert step["reason"]
            if "factor" in step:
                relevance *= step["factor"]
            else:
                relevance += step["lent"] * (1 - relevance)
            assert step["relevance"] == pytest.approx(relevance, abs=1e-3)
        assert relevance == pytest.approx(e["relevance"], abs=1e-3)
    asks = next(hit for hit in json_run["results"] if hit["l0"] == "Assistant: Do you like coffee?")
    assert [s["stage"] for s in asks["explain"]["stages"]] == ["question", "assistant"]
