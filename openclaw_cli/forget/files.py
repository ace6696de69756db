"""The files under the home that are not memory or sessions but may hold a person's words: the gateway's
log, memory and session exports and their `.bak` copies (`memory migrate`), anything else written there.

The words are known by their texts (the person's messages, the replies quoting them, their memories and
journal entries; "needles", at least 8 characters, also as JSON escapes them). A file holding one is
cleaned by what it is: a memory export loses the records that hold it (its count kept true), a JSON
Lines file has the messages that hold it redacted like a transcript and its other lines that hold it
removed, another text file (a log) loses those lines; each is replaced atomically. The workspace's
Markdown is the user's own writing, never rewritten: a file there that holds the words is reported, as
is any file that cannot be cleaned (not text). Memory databases, transcripts, the journal and the model
cache are not looked at here: they have their own steps.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from openclaw_cli.core.fsutil import atomic_write_bytes
from openclaw_cli.core.paths import Home

MIN_NEEDLE = 8
CHUNK = 1 << 20
# Relative to the home: handled elsewhere (their own purge steps), or never the person's words.
SKIPPED_TOP = {"openclaw.json"}
SKIPPED_GATEWAY = {"inbox.jsonl", "token", "gateway.pid"}
SKIPPED_AGENT_DIRS = {"memory", "sessions", "chat"}


def needle_forms(texts: Iterable[str]) -> list[bytes]:
    """Every form a text may take in a file: as is, line by line, and JSON-escaped."""
    forms: set[str] = set()
    for text in texts:
        for piece in [text, *text.splitlines()]:
            piece = piece.strip()
            if len(piece) < MIN_NEEDLE:
                continue
            forms.update({piece, json.dumps(piece)[1:-1], json.dumps(piece, ensure_ascii=False)[1:-1]})
    return sorted((form.encode("utf-8") for form in forms), key=len, reverse=True)


def candidates(home: Home) -> Iterator[Path]:
    """The files this step looks at (see the module doc)."""
    root = home.root
    if not root.is_dir():
        return
    for path in sorted(root.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        parts = path.relative_to(root).parts
        if len(parts) == 1 and parts[0] in SKIPPED_TOP:
            continue
        if parts[0] == "gateway" and len(parts) == 2 and parts[1] in SKIPPED_GATEWAY:
            continue
        if parts[0] == "cache" and len(parts) > 1 and parts[1] == "models":
            continue
        if parts[0] == "agents" and len(parts) > 2 and parts[2] in SKIPPED_AGENT_DIRS:
            continue
        if ".locks" in parts:
            continue
        yield path


def holds(path: Path, needles: list[bytes]) -> bool:
    """Whether the file's bytes contain a needle (read in chunks: a log may be large)."""
    if not needles:
        return False
    from openclaw_cli.security import workspace_file

    if workspace_file.is_sealed(path) and path.suffix == ".md":  # a sealed workspace note: its text
        try:
            text = workspace_file.read(path)
        except OSError:
            return False
        return any(n in text for n in needles)
    overlap = max(len(n) for n in needles)
    tail = b""
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(CHUNK):
                window = tail + chunk
                if any(n in window for n in needles):
                    return True
                tail = window[-overlap:]
    except OSError:
        return False
    return False


def scrub_files(home: Home, texts: Iterable[str]) -> tuple[list[str], list[str]]:
    """Clean every file that holds one of `texts`: (files cleaned, files left as they are)."""
    needles = needle_forms(texts)
    cleaned: list[str] = []
    left: list[str] = []
    for path in candidates(home):
        if not holds(path, needles):
            continue
        in_workspace = "workspace" in path.relative_to(home.root).parts[:3]
        new = None if in_workspace else _cleaned(path.read_bytes(), needles)
        if new is None or any(n in new for n in needles):
            left.append(str(path))
            continue
        atomic_write_bytes(path, new)
        cleaned.append(str(path))
    return cleaned, left


def _cleaned(data: bytes, needles: list[bytes]) -> bytes | None:
    """The file without the needles, or None when it is not a format that can be cleaned."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    try:
        document = json.loads(data)
    except ValueError:
        document = None
    if isinstance(document, dict) and isinstance(document.get("records"), list):
        return _memory_export(document, needles)
    if document is not None:
        return None  # a JSON document of another kind: not ours to cut into
    return _lines(data, needles)


def _memory_export(document: dict[str, Any], needles: list[bytes]) -> bytes:
    def clean(record: Any) -> bool:
        text = json.dumps(record, ensure_ascii=False).encode("utf-8")
        plain = json.dumps(record).encode("utf-8")
        return not any(n in text or n in plain for n in needles)

    document["records"] = [record for record in document["records"] if clean(record)]
    return (json.dumps(document, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def _lines(data: bytes, needles: list[bytes]) -> bytes:
    """Line by line: a message redacted, a session export's meta line without its summary, another line
    holding a needle removed, an end line's count (memory JSON Lines exports) lowered by the records
    removed."""
    from openclaw_cli.sessions.jsonl import parse_line
    from openclaw_cli.sessions.upkeep.redact import redacted

    out: list[bytes] = []
    removed = 0
    for raw in data.split(b"\n"):
        if not any(n in raw for n in needles):
            out.append(raw)
            continue
        message, _ = parse_line(raw)
        if message is not None:
            extra = {"type": message["type"]} if "type" in message else {}
            out.append(json.dumps({**extra, **redacted(message)}, ensure_ascii=False).encode("utf-8"))
            continue
        header = _without_summary(raw)
        if header is not None and not any(n in header for n in needles):
            out.append(header)  # a session export's meta line: its summary was built from the words
        else:
            removed += 1
    if removed and out:
        last = len(out) - 1 if out[-1].strip() else len(out) - 2
        out[last] = _lowered_count(out[last], removed)
    return b"\n".join(out)


def _without_summary(raw: bytes) -> bytes | None:
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("context"), dict):
        return None
    value["context"] = {"summary": None, "summaryCheckpoint": None}
    value["summaryCheckpoint"] = None
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def _lowered_count(raw: bytes, removed: int) -> bytes:
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    if isinstance(value, dict) and value.get("end") is True and isinstance(value.get("records"), int):
        value["records"] = max(0, value["records"] - removed)
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return raw
