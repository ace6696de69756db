"""Per-text runs spread over several threads sharing one session (embedding/per_text.py): every text
runs once, a busy thread does not hold the others up, a failure comes back to the caller, and with the
real models a text's vector does not depend on how many threads shared the list or ran at once."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from openclaw_cli.memory.embedding.composite import CompositeEmbedder
from openclaw_cli.memory.embedding.per_text import run_each
from tests.memory_helpers import service_for


def test_every_text_runs_once_on_at_most_the_threads_asked_for() -> None:
    seen: list[tuple[str, int]] = []
    lock = threading.Lock()

    def one(i: int) -> None:
        time.sleep(0.001)  # long enough for the helpers to take some
        with lock:
            seen.append((threading.current_thread().name, i))

    run_each(50, 3, one)
    assert sorted(i for _, i in seen) == list(range(50))
    assert {name for name, _ in seen} <= {threading.current_thread().name, "embed-1", "embed-2"}


def test_no_more_threads_than_texts_and_none_for_an_empty_list() -> None:
    threads: set[str] = set()
    calls: list[int] = []

    def one(i: int) -> None:
        threads.add(threading.current_thread().name)
        calls.append(i)

    run_each(1, 4, one)
    # One text: the caller's thread only.
    assert calls == [0] and threads == {threading.current_thread().name}
    run_each(0, 4, one)
    assert calls == [0] and len(threads) == 1


def test_a_slow_thread_leaves_the_remaining_texts_to_the_other() -> None:
    """The helper is slow (as when another thread of the process takes its core): the caller runs the
    texts it has not taken instead of waiting at the end with half of them. The helper's first text
    holds it until the caller has run every other one, so the order is fixed by events, not by timing:
    with a fixed share each, the caller would stop at its half and the helper wait out its deadline."""
    caller = threading.current_thread().name
    runs = {"caller": 0, "helper": 0}
    lock = threading.Lock()
    helper_busy = threading.Event()  # the helper has taken a text and is stuck in it
    caller_done = threading.Event()  # the caller has run all the others

    def one(i: int) -> None:
        if threading.current_thread().name != caller:
            helper_busy.set()
            caller_done.wait(30)
            with lock:
                runs["helper"] += 1
            return
        helper_busy.wait(30)  # the caller's first text: the helper has its one by now
        with lock:
            runs["caller"] += 1
            if runs["caller"] == 39:
                caller_done.set()

    run_each(40, 2, one)
    assert caller_done.is_set(), "the caller did not run the 39 texts the helper had not taken"
    assert runs == {"caller": 39, "helper": 1}


def test_a_failure_in_any_thread_is_raised_to_the_caller() -> None:
    def one(i: int) -> None:
        if i == 7:
            raise ValueError("text 7 failed")

    with pytest.raises(ValueError, match="text 7 failed"):
        run_each(30, 2, one)

    caller = threading.current_thread().name
    helper_took = threading.Event()

    def helper_fails(i: int) -> None:
        if threading.current_thread().name != caller:
            helper_took.set()
            raise RuntimeError("helper failed")
        helper_took.wait(30)  # the helper has taken a text (and failed) before the caller runs out of them

    with pytest.raises(RuntimeError, match="helper failed"):
        run_each(30, 2, helper_fails)
    assert helper_took.is_set()


@pytest.fixture(scope="module")
def composite(tmp_path_factory: pytest.TempPathFactory) -> CompositeEmbedder:
    embedder = service_for(tmp_path_factory.mktemp("per_text")).embedder()
    assert isinstance(embedder, CompositeEmbedder)
    return embedder


TEXTS = [f"Note {n}: prefers {n % 7} monitors and tea at {n % 12}pm" for n in range(40)]
TEXTS += ["每周跑步三次，一般早上六点半沿钱塘江跑。", "私はコーヒーが好きです"]


def test_vectors_do_not_depend_on_how_many_threads_share_the_list(composite: CompositeEmbedder) -> None:
    together = composite.embed_passages(TEXTS)  # two threads per model (memory.embedding.threads)
    alone = np.vstack([composite.embed_passages([t]) for t in TEXTS])  # one thread, one text at a time
    np.testing.assert_array_equal(together, alone)


def test_one_session_serves_many_lists_at_once(composite: CompositeEmbedder) -> None:
    """Four callers embed overlapping lists at the same time, each on two threads, all on each model's
    one session: every vector is the one a lone run gives."""
    alone = np.vstack([composite.embed_passages([t]) for t in TEXTS])
    lists = [TEXTS[n:] + TEXTS[:n] for n in (0, 5, 11, 29)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(composite.embed_passages, lists))
    for n, got in zip((0, 5, 11, 29), results, strict=True):
        np.testing.assert_array_equal(got, np.roll(alone, -n, axis=0))
