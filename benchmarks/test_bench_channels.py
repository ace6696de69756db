"""The Telegram channel under load, through the fake Bot API: latency with one chat, throughput with 50.

Latency = from the fake handing an update out in a getUpdates answer to the fake receiving the reply's
sendMessage: the channel (journal, offset, routing, the lanes, the send) plus the agent runtime around a
model that answers at once (its own process, so its time is one loopback round trip). Query expansion and
extraction are off: they are model calls of their own, not the channel's overhead.
Throughput = 50 chats x 10 messages put in the fake at once; every one must be answered, none twice.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.channel_helpers import wait_for
from tests.conftest import ROOT
from tests.fake_telegram import TOKEN, FakeTelegram
from tests.gateway_helpers import Gateway, start_gateway, write_config

CHATS = 50
PER_CHAT = 10


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.fixture(scope="module")
def channel_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Gateway, FakeTelegram]]:
    model = subprocess.Popen(
        [sys.executable, "-m", "tests.fake_openai", "--port", "0", "--reply", "noted"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert model.stdout is not None
    url = model.stdout.readline().strip()
    telegram = FakeTelegram().start()
    home = tmp_path_factory.mktemp("bench-channels") / "home"
    write_config(
        home,
        None,
        llm={"apiBase": url},
        gateway={"queue": {"mode": "followup", "debounceMs": 0}},
        memory={"extraction": {"enabled": False}, "queryExpansion": {"enabled": False}},
        session={"reset": {"atHour": None}, "dmScope": "per-channel-peer"},
        channels={
            "telegram": {
                "enabled": True,
                "apiBase": telegram.api_base,
                "pollTimeoutSeconds": 5,
                "dmPolicy": "open",
            }
        },
    )
    gateway = start_gateway(home, env={"TELEGRAM_BOT_TOKEN": TOKEN})
    telegram.dm(1, "warm up")  # the first turn loads the model client: not part of the measurement
    telegram.wait_sent(1, deadline=120)
    yield gateway, telegram
    gateway.stop()
    telegram.stop()
    model.terminate()
    model.wait(10)


def test_bench_channel_latency_one_chat(benchmark, channel_gateway: tuple[Gateway, FakeTelegram]) -> None:  # type: ignore[no-untyped-def]
    gateway, telegram = channel_gateway
    latencies: list[float] = []

    def one() -> None:
        before = len(telegram.sent)
        update = telegram.dm(7, f"ping {len(latencies)}")
        telegram.wait_sent(before + 1)
        latencies.append((telegram.sent_at[before] - telegram.handed_at[update]) * 1000)

    benchmark.pedantic(one, rounds=40, iterations=1, warmup_rounds=3)
    median = statistics.median(latencies)
    benchmark.extra_info["median_ms"] = round(median, 1)
    benchmark.extra_info["p90_ms"] = round(sorted(latencies)[int(0.9 * len(latencies))], 1)
    print(f"\ngetUpdates -> sendMessage, 1 chat: median {median:.1f} ms over {len(latencies)} messages")


def test_bench_channel_throughput_50_chats(benchmark, channel_gateway: tuple[Gateway, FakeTelegram]) -> None:  # type: ignore[no-untyped-def]
    gateway, telegram = channel_gateway
    rss_before = _rss_kb(gateway.process.pid)

    def burst() -> float:
        start_count = len(telegram.sent)
        started = time.perf_counter()
        for i in range(PER_CHAT):
            for chat in range(CHATS):
                telegram.dm(1000 + chat, f"c{chat} m{i}")
        total = CHATS * PER_CHAT
        wait_for(lambda: len(telegram.sent) >= start_count + total, "every message answered", deadline=600)
        return time.perf_counter() - started

    seconds = benchmark.pedantic(burst, rounds=1, iterations=1)
    total = CHATS * PER_CHAT
    replies = telegram.sent[-total:]
    per_chat: dict[str, int] = {}
    for reply in replies:
        per_chat[str(reply["chat_id"])] = per_chat.get(str(reply["chat_id"]), 0) + 1
    assert sorted(per_chat.values()) == [PER_CHAT] * CHATS  # 0 lost, 0 twice
    rss_after = _rss_kb(gateway.process.pid)
    benchmark.extra_info.update(
        {"messages_per_s": round(total / seconds, 1), "rss_growth_kb": rss_after - rss_before}
    )
    print(
        f"\n{CHATS} chats x {PER_CHAT}: {total / seconds:.1f} messages/s, 0 lost, RSS +{rss_after - rss_before} kB"
    )


def test_bench_channel_rss_over_5000_messages(
    benchmark, channel_gateway: tuple[Gateway, FakeTelegram]
) -> None:  # type: ignore[no-untyped-def]
    """The gateway's RSS growth over 5,000 channel messages (50 chats x 100), each answered once."""
    gateway, telegram = channel_gateway
    rss_before = _rss_kb(gateway.process.pid)
    total = CHATS * 100

    def flood() -> None:
        start_count = len(telegram.sent)
        for i in range(100):
            for chat in range(CHATS):
                telegram.dm(5000 + chat, f"r{chat} m{i}")
        wait_for(lambda: len(telegram.sent) >= start_count + total, "5,000 answers", deadline=1800)

    benchmark.pedantic(flood, rounds=1, iterations=1)
    replies = telegram.sent[-total:]
    per_chat: dict[str, int] = {}
    for reply in replies:
        per_chat[str(reply["chat_id"])] = per_chat.get(str(reply["chat_id"]), 0) + 1
    assert sorted(per_chat.values()) == [100] * CHATS  # none lost, none twice
    growth = _rss_kb(gateway.process.pid) - rss_before
    benchmark.extra_info["rss_growth_kb"] = growth
    print(f"\nRSS growth over {total} channel messages: {growth} kB")
