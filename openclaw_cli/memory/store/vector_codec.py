"""How vectors are stored: int8 with a fixed symmetric clip per table (float32 in tables made before it).

A unit vector of D dimensions has components of about 1/sqrt(D); the clip is CLIP_SIGMAS of those, so
almost nothing clips (measured: MiniLM's 384-d vectors on 10k passages peak at 0.29 = 5.6 sigma, 1.9e-4
of components over a 3.9-sigma clip; synthetic unit vectors peak near 5.3 sigma) while the 127 steps stay
fine enough that int8 ranking agrees with float ranking (recall@10 ~0.99, see the space benchmark).
A composite vector of unit halves (384 + 512 dims) puts the clip at 3.9 sigma of its 384-dim half.

Readers take the dtype and clip from `meta`, never from this module's constants, so a later change of
the rule leaves every existing table readable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

CLIP_SIGMAS = 6.0
INT8_MAX = 127


@dataclass(frozen=True)
class VectorFormat:
    """How one vector table holds its vectors: 'float32' (no clip), 'int8' with a symmetric clip, or
    'float16be' (the postgres backend's halfvec, read as big-endian 16-bit floats)."""

    dtype: str = "float32"
    clip: float = 1.0

    @property
    def is_int8(self) -> bool:
        return self.dtype == "int8"

    @property
    def numpy_dtype(self) -> str:
        """The numpy dtype of one stored component."""
        return {"int8": "i1", "float16be": ">f2"}.get(self.dtype, "<f4")

    @property
    def step(self) -> float:
        """The value of one int8 unit: stored int8 x step = the dequantised component."""
        return self.clip / INT8_MAX

    @property
    def sql_type(self) -> str:
        return "int8" if self.is_int8 else "float"

    @property
    def placeholder(self) -> str:
        """The SQL that turns a bound blob into a vector of this type (vec0 reads untagged blobs as float)."""
        return "vec_int8(?)" if self.is_int8 else "?"


FLOAT32 = VectorFormat()
FLOAT16_BE = VectorFormat("float16be")


def int8_format(dimensions: int) -> VectorFormat:
    return VectorFormat("int8", round(min(1.0, CLIP_SIGMAS / math.sqrt(max(1, dimensions))), 6))


def encode(vector: np.ndarray, fmt: VectorFormat) -> bytes:
    """The stored bytes of a float vector."""
    import numpy as np

    if not fmt.is_int8:
        return np.asarray(vector, dtype=np.float32).tobytes()
    return quantise(np.asarray(vector, dtype=np.float32), fmt.step).tobytes()


def quantise(values: np.ndarray, step: float) -> np.ndarray:
    import numpy as np

    return np.clip(np.rint(values / step), -INT8_MAX, INT8_MAX).astype(np.int8)


def decode(blob: bytes, fmt: VectorFormat) -> np.ndarray:
    """The float32 vector a stored blob stands for (dequantised for int8 tables)."""
    import numpy as np

    if not fmt.is_int8:
        return np.frombuffer(blob, dtype=fmt.numpy_dtype).astype(np.float32, copy=False)
    return np.frombuffer(blob, dtype=np.int8).astype(np.float32) * np.float32(fmt.step)


def query_blob(query: np.ndarray, fmt: VectorFormat) -> bytes:
    """A query for vec0's cosine distance. For int8 tables it is scaled by its own largest component:
    cosine ignores scale, so the query keeps full int8 resolution whatever the caller's half weights."""
    import numpy as np

    query = np.asarray(query, dtype=np.float32)
    if not fmt.is_int8:
        return query.tobytes()
    peak = float(np.abs(query).max())
    return quantise(query, peak / INT8_MAX if peak > 0 else 1.0).tobytes()


def sign_words(rows: np.ndarray) -> np.ndarray:
    """Each row's sign bits packed into 64-bit words (64 dimensions a word, zero-padded)."""
    import numpy as np

    packed = np.packbits(rows > 0, axis=1)
    pad = (-packed.shape[1]) % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view(np.uint64)


def word_weights(query: np.ndarray, words: int) -> np.ndarray:
    """The query's norm within each 64-dimension word: how much agreement in that word is worth.

    This is what lets the sign prefilter follow any weighting of a composite query's halves (a half
    weighted 0 gets weight 0) without knowing where the halves are.
    """
    import numpy as np

    padded = np.zeros(words * 64, dtype=np.float32)
    padded[: len(query)] = query
    return np.sqrt((padded.reshape(words, 64) ** 2).sum(axis=1)).astype(np.float32)
