"""Per-text runs spread over several sessions (embedding/per_text.py): every text runs once, a busy
thread does not hold the others up, a failure comes back to the caller, and with the real models a
text's vector does not depend on how many sessions shared the list."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from openclaw_cli.memory.embedding.composite import CompositeEmbedder
from openclaw_cli.memory.embedding.per_text import run_each
from tests.memory_helpers import service_for


def test_every_text_runs_once_on_the_sessions_asked_for() -> None:
    seen: list[tuple[str, int]] = []
    lock = threading.Lock()

    def one(session: str, i: int) -> None:
        with lock:
            seen.append((session, i))

    run_each(50, 3, lambda n: f"session{n}", one)
    assert sorted(i for _, i in seen) == list(range(50))
    assert {s for s, _ in seen} <= {"session0", "session1", "session2"}


def test_no_more_threads_than_texts_and_none_for_an_empty_list() -> None:
    asked: list[int] = []
    threads: set[str] = set()

    def session(n: int) -> int:
        asked.append(n)
        return n

    def one(session_number: int, i: int) -> None:
        threads.add(threading.current_thread().name)

    run_each(1, 4, session, one)
    # One text: the caller's thread and its first session only.
    assert asked == [0] and threads == {threading.current_thread().name}
    run_each(0, 4, session, one)
    assert asked == [0, 0] and len(threads) == 1


def test_a_slow_session_leaves_the_remaining_texts_to_the_other() -> None:
    """Session 1 is slow (as when another thread of the process takes its core): session 0 runs the
    texts it has not taken instead of waiting at the end with half of them."""
    runs = {0: 0, 1: 0}

    def one(session: int, i: int) -> None:
        time.sleep(0.2 if session == 1 else 0.001)
        runs[session] += 1

    run_each(40, 2, lambda n: n, one)
    assert runs[0] + runs[1] == 40
    assert runs[1] <= 2 and runs[0] >= 38


def test_a_session_loading_late_does_not_hold_up_the_first() -> None:
    loaded = threading.Event()
    order: list[int] = []

    def session(n: int) -> int:
        if n == 1:
            loaded.wait(5)  # loads while session 0 already works
        return n

    def one(session_number: int, i: int) -> None:
        order.append(session_number)
        if len(order) == 10:
            loaded.set()

    run_each(20, 2, session, one)
    assert order[:10] == [0] * 10 and len(order) == 20


def test_a_failure_in_any_thread_is_raised_to_the_caller() -> None:
    def one(session: int, i: int) -> None:
        if i == 7:
            raise ValueError("text 7 failed")

    with pytest.raises(ValueError, match="text 7 failed"):
        run_each(30, 2, lambda n: n, one)

    def session(n: int) -> int:
        if n == 1:
            raise RuntimeError("no session")
        return n

    with pytest.raises(RuntimeError, match="no session"):
        run_each(30, 2, session, lambda session_number, i: None)


@pytest.fixture(scope="module")
def composite(tmp_path_factory: pytest.TempPathFactory) -> CompositeEmbedder:
    embedder = service_for(tmp_path_factory.mktemp("per_text")).embedder()
    assert isinstance(embedder, CompositeEmbedder)
    return embedder


def test_vectors_do_not_depend_on_how_many_sessions_share_the_list(composite: CompositeEmbedder) -> None:
    texts = [f"Note {n}: prefers {n % 7} monitors and tea at {n % 12}pm" for n in range(40)]
    texts += ["每周跑步三次，一般早上六点半沿钱塘江跑。", "私はコーヒーが好きです"]
    together = composite.embed_passages(texts)  # two sessions per model (memory.embedding.threads)
    alone = np.vstack([composite.embed_passages([t]) for t in texts])  # one session, one text at a time
    np.testing.assert_array_equal(together, alone)
