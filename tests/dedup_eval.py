"""The labelled pair set of semantic dedup (fixtures/dedup/pairs.jsonl) and how well a profile's zones
sort it: duplicates should land in the duplicate zone, updates in the grey zone (where the judge turns
them into merges), and related-but-different pairs in the new zone.

The default embedder's vectors hold MiniLM's and USE-m3's side by side, so one embedding pass gives all
three embedders: the composite, and each model alone (its slice of the vector).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from openclaw_cli.memory.search import profiles
from openclaw_cli.memory.search.profiles import SearchProfile
from openclaw_cli.memory.text.analysis import detect_language
from openclaw_cli.memory.writing.dedup import DedupZones, leg_cosines, pair_similarity

PAIRS = Path(__file__).resolve().parent.parent / "fixtures" / "dedup" / "pairs.jsonl"
ZONE_OF_LABEL = {"duplicate": "duplicate", "update": "grey", "different": "new"}
LABELS = tuple(ZONE_OF_LABEL)


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    category: str
    label: str
    lang: str
    # The same fact with one value changed (a number, an identifier, a name, a negation): issue 48.
    changed_value: bool = False


def load_pairs() -> list[Pair]:
    out = []
    for line in PAIRS.read_text(encoding="utf-8").splitlines():
        if line:
            row = json.loads(line)
            out.append(
                Pair(
                    **{k: v for k, v in row.items() if k != "changedValue"},
                    changed_value=bool(row.get("changedValue")),
                )
            )
    return out


def split(pairs: Sequence[Pair]) -> tuple[list[Pair], list[Pair]]:
    """A tuning half and a held-out half: within each (label, language) group, alternate pairs in file
    order, so both halves hold every kind and the zones are judged on pairs they were not chosen on."""
    tuning: list[Pair] = []
    held_out: list[Pair] = []
    seen: dict[tuple[str, str, bool], int] = {}
    for pair in pairs:
        key = (pair.label, pair.lang, pair.changed_value)
        seen[key] = seen.get(key, 0) + 1
        (tuning if seen[key] % 2 else held_out).append(pair)
    return tuning, held_out


# Each embedder: its profile and the slice of the composite vector that is its own vector.
EMBEDDERS: dict[str, tuple[SearchProfile, slice]] = {
    "composite": (profiles.profile_for({"provider": "local", "model": profiles.COMPOSITE}), slice(None)),
    "minilm": (
        profiles.profile_for({"provider": "local", "model": profiles.MINILM}),
        slice(0, profiles.MINILM_DIMS),
    ),
    "use-m3": (
        profiles.profile_for({"provider": "local", "model": profiles.USE_M3}),
        slice(profiles.MINILM_DIMS, None),
    ),
}


def composite_vectors(embedder: Any, pairs: Sequence[Pair]) -> tuple[np.ndarray, np.ndarray]:
    texts = [p.a for p in pairs] + [p.b for p in pairs]
    matrix = np.asarray(embedder.embed_passages(texts), dtype=np.float32)
    return matrix[: len(pairs)], matrix[len(pairs) :]


def similarities(
    profile: SearchProfile, a: np.ndarray, b: np.ndarray, pairs: Sequence[Pair]
) -> list[float | None]:
    """Each pair's dedup similarity as the write path computes it (None: this embedder cannot compare)."""
    out = []
    for x, y, pair in zip(a, b, pairs, strict=True):
        legs = leg_cosines(x, y, profile.legs)
        out.append(pair_similarity(profile, legs, detect_language(pair.a), detect_language(pair.b)))
    return out


def zone_scores(
    zones: DedupZones, sims: Sequence[float | None], pairs: Sequence[Pair]
) -> dict[str, tuple[float, float]]:
    """Precision and recall of each zone (a pair the embedder cannot compare is "new", as when writing)."""
    predicted = [
        "new" if s is None else zones.classify(s, p.a, p.b, p.category)
        for s, p in zip(sims, pairs, strict=True)
    ]
    wanted = [ZONE_OF_LABEL[p.label] for p in pairs]
    out = {}
    for zone in ("duplicate", "grey", "new"):
        hits = sum(p == w == zone for p, w in zip(predicted, wanted, strict=True))
        chosen, relevant = predicted.count(zone), wanted.count(zone)
        out[zone] = (hits / chosen if chosen else 1.0, hits / relevant if relevant else 1.0)
    return out


def sweep(sims: Sequence[float | None], pairs: Sequence[Pair]) -> tuple[float, float, float]:
    """The zones that sort the pairs best: no update or different pair in the duplicate zone (that would
    drop a memory), then the best mean F1 of the three zones. Returns (new_below, duplicate_above, F1)."""
    best = (0.0, 0.0, -1.0)
    grid = [round(x, 2) for x in np.arange(0.40, 1.00, 0.01)]
    for low in grid:
        for high in grid:
            if high < low:
                continue
            scores = zone_scores(DedupZones(low, high), sims, pairs)
            if scores["duplicate"][0] < 1.0:
                continue
            f1 = float(np.mean([2 * p * r / (p + r) if p + r else 0.0 for p, r in scores.values()]))
            if f1 > best[2]:
                best = (low, high, f1)
    return best
