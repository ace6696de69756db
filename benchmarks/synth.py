"""Synthetic memory databases for the speed benchmarks, built through the real write path.

Writing 100k records through the local model would take minutes, and the speed of search does not
depend on what the vectors mean, so the generator puts clustered unit vectors into the embedding cache
under the local embedder's key first; `MemoryStore.add` then finds every vector there and the rest
(records, FTS terms, vec0 rows, history) is written exactly as in real use.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np

from openclaw_cli.config import Settings
from openclaw_cli.memory.db import write_txn
from openclaw_cli.memory.embed import expected_identity
from openclaw_cli.memory.service import MemoryService, NewMemory
from openclaw_cli.memory.store import embedder_key, passage_hash
from openclaw_cli.paths import Home

EVAL = Path(__file__).resolve().parent.parent / "fixtures" / "eval" / "memories.jsonl"
CATEGORIES = ("profile", "preference", "event", "case", "lesson", "insight")


def _vocabulary() -> list[str]:
    words: set[str] = set()
    for line in EVAL.read_text(encoding="utf-8").splitlines():
        words.update(w.strip(".,;:()\"'") for w in json.loads(line)["l0"].split())
    return sorted(w for w in words if w.isascii() and w.isalpha() and len(w) > 2)


def _zipf_vocabulary(rng: random.Random, size: int = 20_000) -> list[str]:
    """The eval set's words among made-up ones, in a random frequency order.

    Real text follows Zipf's law over tens of thousands of words; drawing every word uniformly from the
    eval set's ~600 would make each query term match ~2% of all memories, which no real memory store
    sees, and would measure an artificially huge BM25 result set.
    """
    syllables = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "ve", "zu", "an", "or", "el", "is", "um"]
    made_up = {"".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(size)}
    words = _vocabulary() + sorted(made_up)
    rng.shuffle(words)
    return words


def texts(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    vocab = _zipf_vocabulary(rng)
    weights = [1.0 / rank for rank in range(1, len(vocab) + 1)]
    out = []
    for i in range(count):
        words = rng.choices(vocab, weights=weights, k=rng.randint(7, 14))
        if i % 10 == 0:
            words.append(f"PR #{rng.randint(1, 99999)}")
        out.append(" ".join(words) + f" ({i})")
    return out


def build(home: Path, count: int, seed: int = 7) -> MemoryService:
    settings = Settings()
    service = MemoryService(Home(home), "main", settings.memory)
    bodies = texts(count, seed)
    identity = expected_identity(settings.memory.embedding)
    assert identity is not None
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(256, identity.dimensions)).astype(np.float32)
    store = service.store(service.db_path("user"))
    key = embedder_key(identity.to_dict())
    for start in range(0, count, 5000):
        chunk = bodies[start : start + 5000]
        vecs = centers[rng.integers(0, len(centers), len(chunk))] + rng.normal(
            size=(len(chunk), identity.dimensions)
        )
        vecs = (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float32)
        with write_txn(store.conn):
            store.conn.executemany(
                "INSERT OR REPLACE INTO embedding_cache(content_hash, embedder, vector) VALUES (?, ?, ?)",
                [(passage_hash(t), key, v.tobytes()) for t, v in zip(chunk, vecs, strict=True)],
            )
    records = [
        service.build_record(NewMemory(l0=t, category=CATEGORIES[i % 6], user_id=f"u{i % 3}"))
        for i, t in enumerate(bodies)
    ]
    service.add_many(records)
    return service
