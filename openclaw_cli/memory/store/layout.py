"""How a stored vector is laid out: which models made it, the width of each model's part (its legs), how far
each part is trusted for a text's language, and the English part stored for a text the English model
cannot read.

These are facts of the stored data, read by the store (the vectors' mean per leg, a migration that fixes
older vectors) as well as by embedding/ and search/, so they live here, at the bottom.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

MINILM = "all-MiniLM-L6-v2-int8"
USE_M3 = "use-m3-int8"
COMPOSITE = f"{MINILM}+{USE_M3}"
MINILM_DIMS = 384
USE_M3_DIMS = 512

# The packaged models' legs, by model name; any other embedder's vector is one leg.
MODEL_LEGS: dict[str, tuple[int, ...]] = {
    COMPOSITE: (MINILM_DIMS, USE_M3_DIMS),
    MINILM: (MINILM_DIMS,),
    USE_M3: (USE_M3_DIMS,),
}

# How far the English-only leg of a composite vector is trusted for a memory in each language (search
# weighs the legs with it): not at all for a language the English model cannot read.
LANGUAGE_TRUST = {"en": 1.0, "mixed": 0.5}


def legs_of(identity: dict[str, Any] | None) -> tuple[int, ...]:
    """The leg widths of vectors made by the embedder `identity` (from `meta`; None: the default one)."""
    if identity is None:
        return MODEL_LEGS[COMPOSITE]
    if identity.get("provider") == "local" and identity.get("model") in MODEL_LEGS:
        return MODEL_LEGS[str(identity["model"])]
    return (int(identity.get("dimensions") or 0),)


def unread_half(dimensions: int) -> np.ndarray:
    """The English half stored for a text the English model cannot read.

    Unit-norm like a real half, so every stored vector keeps the same norm and the nearest-neighbour scans
    (cosine over the whole vector) rank memories exactly as they would with a computed half; spread evenly
    over the components, so int8 storage keeps it without clipping; alternating in sign, so it is nearly
    orthogonal to any real sentence vector. Constant, so a text's vector never depends on anything else.
    """
    import numpy as np

    signs = np.where(np.arange(dimensions) % 2 == 0, 1.0, -1.0)
    return (signs / np.sqrt(dimensions)).astype(np.float32)
