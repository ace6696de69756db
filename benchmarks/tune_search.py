"""Print the best search settings on the eval set (fixtures/eval/), from the sweep in tests/evalset.py.

Run from the repository root: python benchmarks/tune_search.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.evalset import build_service, sweep  # noqa: E402


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        service = build_service(Path(tmp))
        results = sweep(service)
        print("mrr     r@10    r@5     settings")
        for metrics, values in results[:12]:
            m = metrics.as_dict()
            print(f"{m['mrr']:.4f}  {m['recall@10']:.4f}  {m['recall@5']:.4f}  {values}")
        service.close()


if __name__ == "__main__":
    main()
