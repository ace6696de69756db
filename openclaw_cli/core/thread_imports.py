"""Imports settled in the calling thread before a background thread that needs them starts.

Two threads importing numpy at the same moment can fail with `_DeadlockError` on numpy's circular
submodules (seen in `memory add --batch` under load: the embedding worker imported it through the
models while the main thread imported it to read stored vectors). Importing it once, here, before the
thread starts leaves both threads a finished module.
"""

from __future__ import annotations


def settle_numpy() -> None:
    """Import numpy in this thread (a no-op once imported; ~0.1 s the first time)."""
    import numpy  # noqa: F401
