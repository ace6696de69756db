"""Skills (issue 50): prompt tokens the skills list takes with 10 and 200 skills, and what discovery costs
a turn when nothing changed (every turn rescans, so edits count from the next turn).

Descriptions are 120 characters, a typical one-sentence description. Tokens are counted with the
project's counter (sessions/budget/tokens.py, cl100k_base), at the default skills.maxPromptChars and without a
budget. Run: python -m pytest benchmarks/test_bench_skills.py --benchmark-only -s -n 0
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.agent.tools.builtin import tool_specs
from openclaw_cli.config.loading import Settings
from openclaw_cli.core.paths import Home
from openclaw_cli.sessions.budget.tokens import count_tokens
from openclaw_cli.skills.service import AgentSkills
from tests.skill_helpers import many_skills

DESCRIPTION_CHARS = 120
UNBUDGETED = Settings(skills={"maxPromptChars": 200_000})


def _home(tmp_path: Path, count: int) -> Path:
    home = tmp_path / "home"
    many_skills(home / "skills", count, DESCRIPTION_CHARS)
    return home


@pytest.mark.parametrize("count", [10, 200])
def test_bench_prompt_tokens_of_the_skills_list(benchmark: Any, tmp_path: Path, count: int) -> None:
    home = _home(tmp_path, count)
    skills = AgentSkills(Home(home), "main", {})
    settings = Settings()

    def turn_block() -> str:
        return skills.view(settings).system_section(None, 0.0)

    text = benchmark(turn_block)
    block = skills.view(settings).block()
    whole = skills.view(UNBUDGETED).block()
    assert len(block.text) <= settings.skills.max_prompt_chars
    assert block.left_out == count - len(block.listed)
    tool = count_tokens(json.dumps(tool_specs(skills=True)[-1]))
    info = {
        "skills": count,
        "max_prompt_chars": settings.skills.max_prompt_chars,
        "chars": len(block.text),
        "tokens": count_tokens(text.strip()),
        "listed": len(block.listed),
        "left_out": block.left_out,
        "shortened": block.shortened,
        "tokens_without_budget": count_tokens(whole.text),
        "skill_read_tool_tokens": tool,
        "median_ms": round(benchmark.stats.stats.median * 1000, 3),
    }
    benchmark.extra_info.update(info)
    print(f"\nBENCH skills prompt, {count} skills: {info}")


def test_bench_discovery_per_turn_when_nothing_changed(benchmark: Any, tmp_path: Path) -> None:
    home = _home(tmp_path, 200)
    skills = AgentSkills(Home(home), "main", {})
    settings = Settings()
    skills.view(settings)
    assert skills.catalog is not None
    parsed = skills.catalog.parses

    view = benchmark(skills.view, settings)

    assert len(view.entries) == 200 and skills.catalog.parses == parsed  # nothing read again
    stats = benchmark.stats.stats
    benchmark.extra_info.update({"skills": 200, "median_ms": round(stats.median * 1000, 3)})
    print(f"\nBENCH skills discovery, 200 unchanged skills: median {stats.median * 1000:.3f} ms")


def test_bench_discovery_first_scan(benchmark: Any, tmp_path: Path) -> None:
    """For comparison: a process's first scan, parsing every SKILL.md (the YAML parser loaded)."""
    home = _home(tmp_path, 200)
    settings = Settings()

    def fresh() -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (AgentSkills(Home(home), "main", {}),), {}

    benchmark.pedantic(lambda skills: skills.view(settings), setup=fresh, rounds=5, iterations=1)
    stats = benchmark.stats.stats
    benchmark.extra_info.update({"skills": 200, "median_ms": round(stats.median * 1000, 3)})
    print(f"\nBENCH skills first scan, 200 skills: median {stats.median * 1000:.3f} ms")
