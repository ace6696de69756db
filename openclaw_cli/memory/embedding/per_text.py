"""Running a list of texts one at a time on several single-threaded model sessions at once.

Both packaged models run each text alone (embedding/onnx_embedder.py `per_text`, embedding/use_m3.py):
dynamic int8 quantisation takes its activation scale over the whole input, so in a batch a vector would
depend on its neighbours. Every session of a model is loaded from the same file with the same options,
so a text's vector does not depend on which session ran it.

Each thread takes the next text when it is free, rather than a fixed share: when another thread of the
process (a bulk load writing the previous chunk) takes a core for a while, the other session goes on
with the remaining texts instead of idling at the end of the list. The first session is loaded already;
the others (loaded on first need) load inside their own threads while the first one is working.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

Session = TypeVar("Session")


def run_each(
    count: int,
    workers: int,
    session: Callable[[int], Session],
    one: Callable[[Session, int], None],
) -> None:
    """Call one(session(n), i) for every i in range(count), on up to `workers` threads (n is the thread's
    number; thread 0 is the caller). The first exception met is raised here once every thread stopped."""
    threads = max(1, min(workers, count))
    texts = iter(range(count))
    lock = threading.Lock()
    failures: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            own = session(worker)
            while not failures:
                with lock:
                    i = next(texts, None)
                if i is None:
                    return
                one(own, i)
        except BaseException as exc:  # reraised in the caller's thread
            failures.append(exc)

    helpers = [threading.Thread(target=work, args=(n,), name=f"embed-{n}") for n in range(1, threads)]
    for helper in helpers:
        helper.start()
    work(0)
    for helper in helpers:
        helper.join()
    if failures:
        raise failures[0]
