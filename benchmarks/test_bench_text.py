"""Throughput of text analysis: index_terms on English and Chinese memories, query analysis, and jieba's
one-time dictionary load (paid by the first Han text a process sees), measured separately.

Run: pytest benchmarks/test_bench_text.py --benchmark-only -n 0 -p no:randomly
"""

from __future__ import annotations

import logging
from typing import Any

from openclaw_cli.memory.text.analysis import fts_match, index_terms, query_terms
from openclaw_cli.memory.text.jieba_dictionary import segmenter

ENGLISH = [
    "User prefers dark mode in every editor and terminal they use.",
    "Merged PR #342 which fixes the race in the session index writer.",
    "Alice (@alice_dev) deploys the billing service to k8s every Friday afternoon.",
    "Upgraded the CLI to v2.3.1; config.json now accepts JSON5 comments.",
    "The user is allergic to peanuts and avoids restaurants that cook with peanut oil.",
    "Lesson: always run the migrations in a transaction, the last outage came from a half-applied one.",
    "Prefers concise answers with code examples rather than long explanations.",
    "Meeting with the design team moved to Thursday at 3pm because of the holiday.",
]
CHINESE = [
    "用户喜欢喝咖啡，尤其是杭州西湖边那家咖啡馆的手冲。",
    "王小明周五把新服务部署到了k8s集群，回滚方案已经写好。",
    "用户对花生过敏，点外卖时要避开用花生油的餐厅。",
    "用TypeScript写前端，后端用Go，数据库选的是PostgreSQL。",
    "上次故障是因为迁移没有放在事务里执行，以后一定要先备份。",
    "用户更喜欢简洁的回答，最好附上代码示例。",
    "下周三下午三点和设计团队开会，讨论新版首页。",
    "记住：我住在杭州市西湖区，工作日早上九点前不要打电话。",
]


def _index_all(texts: list[str]) -> int:
    return sum(len(index_terms(text)) for text in texts)


def _chars(texts: list[str]) -> int:
    return sum(len(text) for text in texts)


def test_index_terms_english(benchmark: Any) -> None:
    _index_all(ENGLISH)  # warm the stemmer cache as a running process would have it
    produced = benchmark(_index_all, ENGLISH)
    assert produced > 0
    benchmark.extra_info["sentences_per_call"] = len(ENGLISH)
    benchmark.extra_info["chars_per_call"] = _chars(ENGLISH)


def test_index_terms_chinese(benchmark: Any) -> None:
    _index_all(CHINESE)  # load jieba outside the timed part; its load is measured below
    produced = benchmark(_index_all, CHINESE)
    assert produced > 0
    benchmark.extra_info["sentences_per_call"] = len(CHINESE)
    benchmark.extra_info["chars_per_call"] = _chars(CHINESE)


def test_query_analysis_mixed(benchmark: Any) -> None:
    queries = ["what does alice deploy on fridays", "咖啡馆在哪里", "部署到k8s集群", "PR #342 v2.3.1"]
    segmenter()

    def analyse() -> int:
        return sum(len(fts_match(query_terms(q)) or "") for q in queries)

    assert benchmark(analyse) > 0


def test_jieba_dictionary_load(benchmark: Any) -> None:
    """What the whole dictionary costs a process that loads it (text/jieba_dictionary.py: one that segments
    many texts): building jieba's prefix dictionary from its cache."""
    import jieba

    jieba.setLogLevel(logging.WARNING)

    def load() -> int:
        tokenizer = jieba.Tokenizer()
        tokenizer.initialize()
        return len(tokenizer.FREQ)

    words = benchmark.pedantic(load, rounds=3, iterations=1, warmup_rounds=0)
    assert words > 100_000
