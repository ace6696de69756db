"""Cost of importance pruning: scoring one message with the rules (uncached, as at a session's first trim)
and fitting a whole long conversation to a budget, importance against the sliding window.

Run: pytest benchmarks/test_bench_importance.py --benchmark-only -n 0 -p no:randomly
"""

from __future__ import annotations

from typing import Any

from openclaw_cli.sessions.budget.context import build_context
from openclaw_cli.sessions.budget.importance import score_text
from tests import importance_eval


def _all_messages() -> list[dict[str, Any]]:
    return [m for c in importance_eval.load() for m in c.messages]


def test_bench_score_per_message_uncached(benchmark) -> None:  # type: ignore[no-untyped-def]
    messages = _all_messages()
    texts = [(str(m["role"]), str(m.get("content") or "")) for m in messages]

    def score_all() -> None:
        score_text.cache_clear()  # the first trim of a session: every message is scored afresh
        for role, text in texts:
            score_text(role, text)

    benchmark.pedantic(score_all, rounds=20, warmup_rounds=1)
    per_message = benchmark.stats.stats.mean / len(texts)
    benchmark.extra_info["messages"] = len(texts)
    benchmark.extra_info["microseconds_per_message"] = round(per_message * 1e6, 2)


def _long_history() -> list[dict[str, Any]]:
    """The report half's conversations back to back: ~1,000 messages, one long session."""
    out: list[dict[str, Any]] = []
    for conversation in importance_eval.load("report"):
        for message in conversation.messages:
            out.append({**message, "idx": len(out)})
    return out


def test_bench_fit_long_session_importance(benchmark) -> None:  # type: ignore[no-untyped-def]
    history = _long_history()
    benchmark(lambda: build_context(history, None, None, 6000, strategy="importance"))
    benchmark.extra_info["messages"] = len(history)


def test_bench_fit_long_session_sliding(benchmark) -> None:  # type: ignore[no-untyped-def]
    history = _long_history()
    benchmark(lambda: build_context(history, None, None, 6000, strategy="sliding"))
    benchmark.extra_info["messages"] = len(history)
