"""Sweep the search parameters over the eval set and print the best settings by MRR then recall@10.

Run: python benchmarks/tune_search.py   (a few minutes on 2 cores)
"""

from __future__ import annotations

import itertools
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from evalset import build_service, evaluate  # noqa: E402

from openclaw_cli.config import SearchSettings  # noqa: E402


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        service = build_service(Path(tmp))
        results = []
        grid = itertools.product(
            (0.5, 1.0, 1.5, 2.0), (0.5, 1.0, 1.5), (0.2, 0.3, 0.5), (0.0, 0.15, 0.25), (20, 50)
        )
        for bm25_w, vec_w, unk, min_sim, cand in grid:
            settings = SearchSettings(
                bm25Weight=bm25_w,
                vectorWeight=vec_w,
                unknownTokenThreshold=unk,
                minVectorScore=min_sim,
                candidates=cand,
            )
            metrics = evaluate(service, settings, "hybrid")
            results.append(
                (metrics.mrr, metrics.recall_at_10, metrics.recall_at_5, bm25_w, vec_w, unk, min_sim, cand)
            )
        results.sort(reverse=True)
        print("mrr  r@10  r@5  bm25w vecw unk minsim cand")
        for row in results[:15]:
            print(" ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row))
        for mode in ("bm25", "vector", "hybrid"):
            print(mode, evaluate(service, SearchSettings(), mode).as_dict())
        service.close()


if __name__ == "__main__":
    main()
