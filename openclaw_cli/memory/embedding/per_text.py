"""Running a list of texts one at a time on several threads at once, all on one model session.

Both packaged models run each text alone (embedding/onnx_embedder.py `per_text`, embedding/use_m3/model.py):
dynamic int8 quantisation takes its activation scale over the whole input, so in a batch a vector would
depend on its neighbours. The session is single-threaded (intra-op threads 1), so each run executes on
the thread that calls it, and onnxruntime allows concurrent runs of one session: the threads share it.
A second session per model used to be loaded for the second thread; sharing one gives the same vectors
(the same session runs every text) at the same rate, without that load (60 ms for MiniLM, 25 ms for
USE-m3, taken from the first chunk of a bulk load) or its memory.

Each thread takes the next text when it is free, rather than a fixed share: when another thread of the
process (a bulk load writing the previous chunk) takes a core for a while, the other thread goes on
with the remaining texts instead of idling at the end of the list.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


def run_each(count: int, workers: int, one: Callable[[int], None]) -> None:
    """Call one(i) for every i in range(count), on up to `workers` threads (the caller is one of them).
    The first exception met is raised here once every thread stopped."""
    threads = max(1, min(workers, count))
    texts = iter(range(count))
    lock = threading.Lock()
    failures: list[BaseException] = []

    def work() -> None:
        try:
            while not failures:
                with lock:
                    i = next(texts, None)
                if i is None:
                    return
                one(i)
        except BaseException as exc:  # reraised in the caller's thread
            failures.append(exc)

    helpers = [threading.Thread(target=work, name=f"embed-{n}") for n in range(1, threads)]
    for helper in helpers:
        helper.start()
    work()
    for helper in helpers:
        helper.join()
    if failures:
        raise failures[0]
