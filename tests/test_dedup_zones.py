"""Semantic dedup's zones, measured: the labelled pairs (fixtures/dedup/pairs.jsonl) sorted by the default
embedder's profile must reach the precision and recall it reached when the zones were chosen.

The pairs: duplicates (paraphrases, restatements, translations), updates (the same fact with a new value)
and related-but-different memories (the same template about another person, the same topic with another
preference), in English, Chinese and across the two. benchmarks/test_bench_writing.py prints every
embedder's figures.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from openclaw_cli.config import DedupSettings
from openclaw_cli.memory.writing.dedup import zones_for
from tests import dedup_eval
from tests.memory_helpers import service_for

# Measured with the composite profile's zones (0.61 / 0.88) on 178 pairs: duplicate (1.00, 0.33),
# grey (0.42, 0.75), new (0.75, 0.69). The floors sit just below. Precision of the duplicate zone must stay 1: a pair there
# that is not a duplicate is a memory dropped.
FLOORS = {"duplicate": (1.0, 0.30), "grey": (0.40, 0.72), "new": (0.72, 0.66)}


def test_pair_set_covers_every_label_in_both_languages_and_across() -> None:
    pairs = dedup_eval.load_pairs()
    assert len(pairs) >= 150
    counts = Counter((p.label, p.lang) for p in pairs)
    for label in dedup_eval.LABELS:
        for lang in ("en", "zh", "mixed"):
            assert counts[label, lang] >= 5, (label, lang)
    assert len({(p.a, p.b) for p in pairs}) == len(pairs)


@pytest.fixture(scope="module")
def composite_sims(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[list[float | None], list[dedup_eval.Pair]]:
    home: Path = tmp_path_factory.mktemp("zones")
    embedder = service_for(home).embedder()
    pairs = dedup_eval.load_pairs()
    a, b = dedup_eval.composite_vectors(embedder, pairs)
    profile, _ = dedup_eval.EMBEDDERS["composite"]
    return dedup_eval.similarities(profile, a, b, pairs), pairs


def test_default_profile_zones_reach_their_precision_and_recall(
    composite_sims: tuple[list[float | None], list[dedup_eval.Pair]],
) -> None:
    sims, pairs = composite_sims
    profile, _ = dedup_eval.EMBEDDERS["composite"]
    scores = dedup_eval.zone_scores(zones_for(profile, DedupSettings()), sims, pairs)
    for zone, (precision, recall) in FLOORS.items():
        assert scores[zone][0] >= precision, (zone, scores[zone])
        assert scores[zone][1] >= recall, (zone, scores[zone])


def test_default_profile_zones_are_the_best_on_the_pairs(
    composite_sims: tuple[list[float | None], list[dedup_eval.Pair]],
) -> None:
    sims, pairs = composite_sims
    profile, _ = dedup_eval.EMBEDDERS["composite"]
    low, high, _ = dedup_eval.sweep(sims, pairs)
    assert (profile.dedup_new_below, profile.dedup_duplicate_above) == (low, high)


def test_the_seeds_boundaries_sort_the_pairs_worse(
    composite_sims: tuple[list[float | None], list[dedup_eval.Pair]],
) -> None:
    sims, pairs = composite_sims
    profile, _ = dedup_eval.EMBEDDERS["composite"]
    ours = dedup_eval.zone_scores(zones_for(profile, DedupSettings()), sims, pairs)
    seed = dedup_eval.zone_scores(
        zones_for(profile, DedupSettings(new_below=0.7, duplicate_above=0.92)), sims, pairs
    )
    assert ours["duplicate"][1] > seed["duplicate"][1]
    assert ours["grey"][1] > seed["grey"][1]
