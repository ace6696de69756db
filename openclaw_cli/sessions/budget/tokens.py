"""Token counts with tiktoken, using the BPE files the litellm package ships (never downloaded).

litellm is not imported (it costs seconds): its package directory is found with importlib, the files in
litellm_core_utils/tokenizers/ are matched to encodings by the sha256 that tiktoken_ext.openai_public
expects, and the encoding is built from that module's own constructor with a local-file loader.
Without the files, counts fall back to an estimate. Everything loads lazily, once per process.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import threading
import types
import unicodedata
from pathlib import Path
from typing import Any

DEFAULT_ENCODING = "cl100k_base"
_TOKENIZER_SUBDIR = ("litellm_core_utils", "tokenizers")

_lock = threading.Lock()
_encodings: dict[str, Any] = {}  # name -> tiktoken.Encoding, or None when unavailable


def litellm_tokenizer_dir() -> Path | None:
    """litellm's bundled tokenizer directory, located without importing litellm."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location).joinpath(*_TOKENIZER_SUBDIR)
        if candidate.is_dir():
            return candidate
    return None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _files_by_hash(directory: Path) -> dict[str, Path]:
    # BPE files are base64-token-space-rank lines; skip the JSON tokenizers and licences by their start.
    found: dict[str, Path] = {}
    for path in directory.iterdir():
        if not path.is_file() or path.suffix in (".json", ".py") or path.stat().st_size < 100_000:
            continue
        found[_sha256(path)] = path
    return found


def _build_encoding(name: str, directory: Path) -> Any:
    import tiktoken
    import tiktoken.load
    import tiktoken_ext.openai_public as public

    constructor = public.ENCODING_CONSTRUCTORS.get(name)
    if constructor is None:
        return None
    files = _files_by_hash(directory)

    def local_loader(_url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        if expected_hash is None or expected_hash not in files:
            raise FileNotFoundError(f"no local BPE file for {name}")
        # Read here rather than through tiktoken.load.load_tiktoken_bpe, which copies every file it
        # reads into a cache in the system temp directory: pointless for a local file, and outside the home.
        data = files[expected_hash].read_bytes()
        if not tiktoken.load.check_hash(data, expected_hash):
            raise ValueError(f"BPE file for {name} does not match its hash")
        return {
            base64.b64decode(token): int(rank)
            for token, rank in (line.split() for line in data.splitlines() if line)
        }

    # Run the official constructor (pattern, special tokens) with its loader pointed at local files.
    bound = types.FunctionType(
        constructor.__code__, {**constructor.__globals__, "load_tiktoken_bpe": local_loader}
    )
    try:
        params = bound()
    except (FileNotFoundError, ValueError, OSError):
        return None
    return tiktoken.Encoding(
        name=params["name"],
        pat_str=params["pat_str"],
        mergeable_ranks=params["mergeable_ranks"],
        special_tokens=params["special_tokens"],
        explicit_n_vocab=params.get("explicit_n_vocab"),
    )


def get_encoding(name: str = DEFAULT_ENCODING, directory: Path | None = None) -> Any:
    """The tiktoken Encoding `name` from litellm's files, or None when they are not available."""
    with _lock:
        if name in _encodings:
            return _encodings[name]
        where = directory if directory is not None else litellm_tokenizer_dir()
        encoding = None
        if where is not None:
            try:
                encoding = _build_encoding(name, where)
            except ImportError:
                encoding = None
        _encodings[name] = encoding
        return encoding


def estimate_tokens(text: str) -> int:
    """~4 characters per token for alphabetic scripts, one token per CJK character."""
    wide = sum(1 for ch in text if unicodedata.east_asian_width(ch) in ("W", "F"))
    rest = len(text) - wide
    return wide + (rest + 3) // 4


def count_tokens(text: str, encoding_name: str = DEFAULT_ENCODING) -> int:
    if not text:
        return 0
    encoding = get_encoding(encoding_name)
    if encoding is None:
        return estimate_tokens(text)
    return len(encoding.encode(text, disallowed_special=()))


def counter_is_exact(encoding_name: str = DEFAULT_ENCODING) -> bool:
    return get_encoding(encoding_name) is not None
