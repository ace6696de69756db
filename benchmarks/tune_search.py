"""Print the best search profiles on the tuning half of the eval set (fixtures/eval/), from the sweep in
tests/fusion_eval.py, with the per-kind table of the best one in each mode on the held-out half: a value is
chosen on one half and judged on the other.

Run from the repository root: python benchmarks/tune_search.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from openclaw_cli.memory.search.profiles import profile_for  # noqa: E402
from openclaw_cli.memory.store.sqlite import vec  # noqa: E402
from tests import fusion_eval  # noqa: E402
from tests.evalset import build_service, load_queries  # noqa: E402


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        service = build_service(Path(tmp))
        features = fusion_eval.prepare(service, load_queries(half="tuning"))
        held_out = fusion_eval.prepare(service, load_queries(half="held-out"))
        store = next(iter(service.existing_stores()))
        results = fusion_eval.sweep(features, profile_for(vec.stored_identity(store.conn)))
        for score, profile in results[:10]:
            print(f"{score:.4f}  {profile.to_dict()}")
        best = results[0][1]
        tables = {mode: fusion_eval.metrics(held_out, best, mode) for mode in ("bm25", "vector", "hybrid")}
        print("held-out half:")
        print("kind            " + "  ".join(f"{m:>22}" for m in tables) + "   (recall@10 / MRR / empty)")
        for kind in sorted(tables["hybrid"]):
            cells = [tables[m][kind] for m in tables]
            print(
                f"{kind:16}" + "  ".join(f"{c.recall_at_10:>8.3f}/{c.mrr:.3f}/{c.empty:.2f}" for c in cells)
            )
        service.close()


if __name__ == "__main__":
    main()
