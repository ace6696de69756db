"""The text of `memory search --explain`: for each result, a relevance formula that adds up and each
stage's factor with its reason; for the query, the words as typed with their stems. Reads the same
fields `--json` carries (memory/search/explain/data.py)."""

from __future__ import annotations

from typing import Any

_INDENT = "        "


def result_lines(e: dict[str, Any]) -> list[str]:
    """The explanation of one result, from its `explain` object."""
    lines = [_INDENT + _fusion_text(e)]
    for step in e.get("stages", []):
        lines.append(_INDENT + "  " + _step_text(step))
    lines.append(
        _INDENT + f"score = relevance {e['relevance']:.2f} × recall {e['retrievability']:.2f} "
        "(how well it is remembered)"
    )
    phrasing = e.get("phrasing")
    if phrasing is not None:
        from openclaw_cli.memory.search.legs.expansion import EXPANSION_WEIGHT

        lines.append(
            _INDENT + f"found through the model's phrasing “{phrasing}”: that score × {EXPANSION_WEIGHT:g} "
            f"→ {e['context']['expansion']:.2f}"
        )
    lines.append(_INDENT + _legs_text(e))
    return lines


def expansion_line(expansion: dict[str, Any]) -> str:
    """What --expand did: whether the model was asked and what it answered."""
    if not expansion["asked"]:
        return f"expansion: {expansion['model']} not asked (the query's own words found strong results)"
    phrasings = "; ".join(f"“{p}”" for p in expansion["phrasings"]) or "none"
    return f"expansion: {expansion['model']} gave {phrasings}"


def _fusion_text(e: dict[str, Any]) -> str:
    f = e.get("fusion")
    if f is None:  # a result without its profile: the legs only
        return f"keywords {e['lexical']:.2f}, meaning {e['semantic']:.2f}"
    k, m, fused = f["keywords"], f["meaning"], f["relevance"]
    if "agreement" not in f:
        return f"relevance {fused:.2f} = 1 − (1 − keywords {k:.2f})(1 − meaning {m:.2f})"
    a, b = f["lexicalWeight"] * k, f["semanticWeight"] * m
    high, low = max(a, b), min(a, b)
    return (
        f"relevance {fused:.2f} = {high:.2f} + {f['agreement']:g} × {low:.2f} × (1 − {high:.2f}), "
        f"the stronger and weaker of keywords {f['lexicalWeight']:g} × {k:.2f} and "
        f"meaning {f['semanticWeight']:g} × {m:.2f}"
    )


def _step_text(step: dict[str, Any]) -> str:
    after = step["relevance"]
    if "lent" in step:
        lent = step["lent"]
        own = 1.0 - (1.0 - after) / (1.0 - lent) if lent < 1.0 else 0.0
        return f"+ {lent:.2f} {step['reason']}: 1 − (1 − {own:.2f})(1 − {lent:.2f}) → {after:.2f}"
    if "rerankScore" in step:
        return f"reranked ({step['rerankScore']:.2f}): {step['reason']} → {after:.2f}"
    return f"× {step['factor']:.2f} {step['reason']} → {after:.2f}"


def _legs_text(e: dict[str, Any]) -> str:
    parts = []
    if e["bm25Rank"] is not None:
        parts.append(f"keywords: bm25 #{e['bm25Rank']} ({e['bm25Score']:.2f})")
    if e["similarity"] is not None:
        legs = "/".join(f"{v:.2f}" for v in e["legSimilarities"] or [])
        rank = f", #{e['vectorRank']}" if e["vectorRank"] is not None else ""
        parts.append(f"meaning: similarity {e['similarity']:.2f} (models {legs}, {e['language']}){rank}")
    return "; ".join(parts) or "no keyword or vector match of its own"


def words_line(analysis: dict[str, Any]) -> str:
    """`words: like (lik), 编辑器 (编辑 辑器); left out: do`: each word searched as typed, with the
    terms made of it in parentheses where they differ from it."""
    shown = []
    for word in analysis.get("words", []):
        other = [t for t in word["terms"] if t != word["typed"].casefold()]
        shown.append(word["typed"] + (f" ({' '.join(other)})" if other else ""))
    line = "words: " + (", ".join(shown) or "(none)")
    if analysis.get("leftOut"):
        line += "; left out: " + ", ".join(analysis["leftOut"])
    return line
