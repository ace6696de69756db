"""The naive design the 100k benchmark compares against (issue 23): in one process, sqlite-vec KNN over
float vectors, FTS5 BM25 over the texts, and reciprocal rank fusion of the two lists; nothing else.

Same texts, same vectors and the same query embedder as the openclaw store (benchmarks/store100k.py).
`python -m benchmarks.naive DB QUERY` is its cold path: one whole process that loads the models, opens
the database, searches once and prints the results as JSON.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

POOL = 50  # candidates per leg
RRF_K = 60


def connect(path: Path) -> Any:
    import apsw

    from openclaw_cli.memory.store.sqlite.connection import vec_extension_path

    conn = apsw.Connection(str(path))
    conn.enable_load_extension(True)
    conn.load_extension(vec_extension_path())
    return conn


def build(path: Path, texts: Sequence[str], vectors: Any) -> None:
    conn = connect(path)
    dims = vectors.shape[1]
    with conn:
        conn.execute("CREATE TABLE memories(id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
        conn.execute("CREATE VIRTUAL TABLE fts USING fts5(text, content='memories', content_rowid='id')")
        conn.execute(f"CREATE VIRTUAL TABLE vec USING vec0(embedding float[{dims}] distance_metric=cosine)")
        for n, (text, vector) in enumerate(zip(texts, vectors, strict=True), start=1):
            conn.execute("INSERT INTO memories(id, text) VALUES (?, ?)", (n, text))
            conn.execute("INSERT INTO fts(rowid, text) VALUES (?, ?)", (n, text))
            conn.execute("INSERT INTO vec(rowid, embedding) VALUES (?, ?)", (n, vector.tobytes()))
    conn.close()


def fts_query(text: str) -> str:
    """Every word of the query as a quoted FTS5 string, OR-ed: user text never becomes FTS syntax."""
    words = re.findall(r"\w+", text)
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


class NaiveSearcher:
    def __init__(self, path: Path, embedder: Any) -> None:
        self.conn = connect(path)
        self.embedder = embedder

    def search(self, query: str, k: int = 10) -> tuple[list[tuple[int, str]], dict[str, float]]:
        timings: dict[str, float] = {}
        started = last = time.perf_counter()

        def lap(stage: str) -> None:
            nonlocal last
            now = time.perf_counter()
            timings[stage] = (now - last) * 1000
            last = now

        match = fts_query(query)
        keyword = (
            [
                r
                for (r,) in self.conn.execute(
                    "SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY bm25(fts) LIMIT ?", (match, POOL)
                )
            ]
            if match
            else []
        )
        lap("bm25")
        vector = self.embedder.embed_query(query).vector.astype("float32")
        lap("embed")
        nearest = [
            r
            for (r,) in self.conn.execute(
                "SELECT rowid FROM vec WHERE embedding MATCH ? AND k = ?", (vector.tobytes(), POOL)
            )
        ]
        lap("vector")
        scores: dict[int, float] = {}
        for ranking in (keyword, nearest):
            for rank, rowid in enumerate(ranking, start=1):
                scores[rowid] = scores.get(rowid, 0.0) + 1.0 / (RRF_K + rank)
        top = sorted(scores, key=lambda r: -scores[r])[:k]
        texts = (
            dict(
                self.conn.execute(
                    f"SELECT id, text FROM memories WHERE id IN ({','.join('?' * len(top))})", top
                )
            )
            if top
            else {}
        )
        lap("fuse")
        timings["total"] = (time.perf_counter() - started) * 1000
        return [(r, texts[r]) for r in top], timings


def main(argv: Sequence[str]) -> None:
    from benchmarks.store100k import model_cache, settings
    from openclaw_cli.memory.embedding.loader import create_embedder

    db, query = Path(argv[0]), argv[1]
    embedder = create_embedder(settings().memory.embedding, one_shot=True, cache_dir=model_cache())
    hits, timings = NaiveSearcher(db, embedder).search(query)
    print(json.dumps({"results": [{"id": r, "text": t} for r, t in hits], "timingsMs": timings}))


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
