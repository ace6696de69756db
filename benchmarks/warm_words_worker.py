"""One warm process for benchmarks/test_bench_word_table.py: the 100k store's 300 queries searched once
each (each query's first hybrid search, when the `neighbours` stage meets words the process has not),
after a warm-up that meets no word (identifier queries: strong keyword evidence, so the stage does not
run; they load the model, the vector matrix and the keyword copy), with the home's word tables (`table`), with them and the background warm-up's pass done first
(`warmed`, as a gateway once ready), or without any (`none`).

`python -m benchmarks.warm_words_worker HOME table|warmed|none` prints one JSON object: each query's
total ms and process CPU ms, its (id, score) pairs, the words embedded and read from the tables, and the
load average at the end.
"""

from __future__ import annotations

import json
import os
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from benchmarks import corpus100k, store100k

WARM_UP = 20  # identifier queries searched first in every variant


def run(home: Path, variant: str) -> dict[str, Any]:
    from openclaw_cli.core.paths import Home
    from openclaw_cli.memory.embedding import word_table
    from openclaw_cli.memory.search.legs import neighbours
    from openclaw_cli.memory.search.legs.word_warmup import Source, WordWarmUp
    from openclaw_cli.memory.search.pipeline import SearchRequest
    from openclaw_cli.memory.service import MemoryService

    if variant == "none":  # the search as before the tables: every word a process meets is embedded
        word_table.WordTables.now = classmethod(lambda cls, *args, **kwargs: None)  # type: ignore[assignment]
    queries = corpus100k.queries(corpus100k.memories(store100k.COUNT))
    service = MemoryService(Home(home), "main", store100k.settings().memory, warm=True)
    for query in [q for q in queries if q.kind == "identifier"][:WARM_UP]:
        service.search(SearchRequest(query=query.text, k=10))
    for store in service.existing_stores():
        store.storage.keep_keywords_in_memory(wait=True)
    vectors = neighbours.word_vectors(service.embedder())
    assert vectors is not None and vectors.embedded == 0, "the warm-up met words"
    warmed = 0
    if variant == "warmed":
        warmup = WordWarmUp(vectors, Home(home).word_cache_dir, lambda: False)
        warmup.run_pass([Source(store, nullcontext()) for store in service.existing_stores()])
        warmed = warmup.embedded
    embedded, from_table = vectors.embedded, vectors.from_table
    requests = [SearchRequest(query=q.text, k=10) for q in queries]
    walls, cpus, words, found = [], [], [], []
    for request in requests:
        cpu, before = time.process_time(), vectors.embedded
        result = service.search(request)
        cpus.append((time.process_time() - cpu) * 1000)
        walls.append(result.timings_ms["total"])
        words.append(vectors.embedded - before)
        found.append([(hit.record.id, hit.candidate.score) for hit in result.hits])
    again = [service.search(request).timings_ms["total"] for request in requests]
    service.close()
    return {
        "first": walls,
        "firstCpu": cpus,
        "again": again,
        "wordsPerQuery": words,
        "found": found,
        "embedded": vectors.embedded - embedded,
        "fromTable": vectors.from_table - from_table,
        "warmUpEmbedded": warmed,
        "load": os.getloadavg()[0],
    }


if __name__ == "__main__":
    print(json.dumps(run(Path(sys.argv[1]), sys.argv[2])))
