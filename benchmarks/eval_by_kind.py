"""Retrieval quality of the eval set by query kind (keyword, zh, zh-2char, mixed, identifier, ...), for the
bm25 and hybrid modes: the numbers to compare before and after a change to text analysis.

Run: PYTHONPATH=. python benchmarks/eval_by_kind.py > after.json
"""

from __future__ import annotations

import json
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from openclaw_cli.config.loading import SearchSettings
from tests.evalset import build_service, evaluate, load_jsonl


def by_kind(home: Path) -> dict[str, dict[str, dict[str, float]]]:
    service = build_service(home)
    kinds: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for query in load_jsonl("queries.jsonl"):
        kinds[query["kind"]].append(query)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for mode in ("bm25", "hybrid"):
        out[mode] = {"all": evaluate(service, SearchSettings(), mode).as_dict()}
        for kind, items in sorted(kinds.items()):
            out[mode][kind] = evaluate(service, SearchSettings(), mode, items).as_dict()
    service.close()
    return out


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        print(json.dumps(by_kind(Path(tmp)), indent=1))
