"""Forgetting one person in the transcripts (`memory purge --sessions`, DESIGN.md "Identity").

Whose a stored user message is: its `userId`; else nobody when it is `anonymous`; else, for messages
stored before messages named their person, the group `sender` or the session key's peer (the owner in
the main session), as identity.for_key resolves them. Ids are compared after identityLinks, so an
address linked to the person is the person.

A session is the person's own when its meta names them as the user (a direct session) or when every user
message in it is theirs: it is deleted with its index entries. In a shared session (the main session
under dmScope main, a group) their messages are redacted in place, with the assistant and tool messages
that answer them (up to the next user message of somebody else: replies quote the question): the
content becomes PLACEHOLDER, tool-call arguments `{}`, and who spoke is dropped; idx, role and ts stay, and
so does the line count, so nothing that points at an idx moves. messages.jsonl is replaced atomically
under the session lock (a writer that kept the old file open notices the new one, sessions/writer.py),
with meta.json's checkpoint cleared first, so a crash in between leaves a session that is read whole.
A summary in context.json (and an older one in summaries.jsonl) whose checkpoint reaches a redacted
message was built from it: it is dropped, to be rebuilt. Token counts cached for those messages go too.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import OpenclawError
from openclaw_cli.core.fsutil import atomic_write_bytes, atomic_write_json
from openclaw_cli.security.files import read_document, read_lines, seal_new_lines
from openclaw_cli.sessions.archive import archive_path, is_compressed, read_transcript, rewrite_archive
from openclaw_cli.sessions.jsonl import parse_line, read_messages
from openclaw_cli.sessions.keys import SessionKey, parse_key
from openclaw_cli.sessions.writer import meta_counters

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Settings
    from openclaw_cli.sessions.store import SessionStore

PLACEHOLDER = "[purged]"
SUMMARY_HISTORY = "summaries.jsonl"
TOKENS = "tokens.json"
MIN_NEEDLE = 8  # shorter texts ("ok", "hi") say nothing about anyone and would match anywhere
Speaker = Callable[[dict[str, Any]], "str | None"]


def person_matcher(person: str, links: Mapping[str, Sequence[str]]) -> Callable[[Any], bool]:
    """Whether a stored person id (or address) is `person`, identityLinks applied."""
    from openclaw_cli.identity.persons import canonical_person

    def matches(stored: Any) -> bool:
        if not isinstance(stored, str) or not stored.strip():
            return False
        try:
            return canonical_person(stored, links) == person
        except OpenclawError:
            return False

    return matches


def speaker_of(settings: Settings, key: SessionKey | None) -> Speaker:
    """The person who said a user message of the session with `key` (None: nobody known)."""
    from openclaw_cli.identity.persons import canonical_person, for_key

    links = settings.session.identity_links

    def speaker(message: dict[str, Any]) -> str | None:
        if message.get("role") != "user" or message.get("purged"):
            return None
        try:
            user = message.get("userId")
            if isinstance(user, str) and user.strip():
                return canonical_person(user, links)
            if message.get("anonymous") or key is None:
                return None
            sender = message.get("sender")
            return for_key(
                settings, key, sender=sender if isinstance(sender, str) and sender else None
            ).person
        except OpenclawError:
            return None

    return speaker


@dataclass
class SessionFinding:
    """What one session holds of the person: all of it (`own`), or the messages to redact."""

    session_id: str
    own: bool
    redact: list[int] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # the person's words in it, and the replies quoting them


def _key_of(meta: dict[str, Any]) -> SessionKey | None:
    try:
        return parse_key(str(meta.get("sessionKey")))
    except OpenclawError:
        return None


def runs_of(messages: Iterable[dict[str, Any]], person: str, speaker: Speaker) -> list[int]:
    """The idx of every message of `person` and of every message answering one (see the module doc)."""
    chosen: list[int] = []
    theirs = False
    for message in messages:
        if message.get("role") == "user":
            theirs = speaker(message) == person
        if theirs and not message.get("purged"):
            chosen.append(int(message["idx"]))
    return chosen


def find(store: SessionStore, session_id: str, person: str, settings: Settings) -> SessionFinding | None:
    """What the session holds of `person`, or None (nothing, or a session too damaged to read)."""
    from openclaw_cli.sessions.meta_file import read_meta_file

    directory = store.session_dir(session_id)
    try:
        meta = read_meta_file(directory / "meta.json")
        messages = read_messages(directory / "messages.jsonl").messages
    except OpenclawError:
        return None  # doctor reports it
    matches = person_matcher(person, settings.session.identity_links)
    speaker = speaker_of(settings, _key_of(meta))
    people = [speaker(m) for m in messages if m.get("role") == "user" and not m.get("purged")]
    own = matches(meta.get("userId")) or (bool(people) and all(p == person for p in people))
    chosen = [int(m["idx"]) for m in messages] if own else runs_of(messages, person, speaker)
    if not chosen and not own:
        return None
    picked = set(chosen)
    texts = [text for m in messages if m["idx"] in picked for text in _texts(m)]
    return SessionFinding(session_id, own, [] if own else chosen, texts)


def persons(store: SessionStore, session_id: str, settings: Settings) -> set[str]:
    """Every person the session names (its user, the speakers of its messages)."""
    from openclaw_cli.identity.persons import canonical_person
    from openclaw_cli.sessions.meta_file import read_meta_file

    directory = store.session_dir(session_id)
    try:
        meta = read_meta_file(directory / "meta.json")
        messages = read_messages(directory / "messages.jsonl").messages
    except OpenclawError:
        return set()
    speaker = speaker_of(settings, _key_of(meta))
    found = {p for m in messages if (p := speaker(m)) is not None}
    user = meta.get("userId")
    if isinstance(user, str) and user.strip():
        with contextlib.suppress(OpenclawError):
            found.add(canonical_person(user, settings.session.identity_links))
    return found


def _texts(message: dict[str, Any]) -> list[str]:
    found = [str(message.get("content") or "")]
    for call in message.get("toolCalls") or []:
        if isinstance(call, dict) and isinstance(call.get("function"), dict):
            found.append(str(call["function"].get("arguments") or ""))
    return [text.strip() for text in found if len(text.strip()) >= MIN_NEEDLE]


def redacted(message: dict[str, Any]) -> dict[str, Any]:
    """The message with nothing of what was said or who said it: idx, role and ts, and tool pairing."""
    kept: dict[str, Any] = {"idx": message["idx"], "role": message["role"], "content": PLACEHOLDER}
    if "ts" in message:
        kept["ts"] = message["ts"]
    calls = message.get("toolCalls")
    if isinstance(calls, list):
        kept["toolCalls"] = [_blank_call(call) for call in calls if isinstance(call, dict)]
    if isinstance(message.get("toolCallId"), str):
        kept["toolCallId"] = message["toolCallId"]
    kept["purged"] = True
    return kept


def _blank_call(call: dict[str, Any]) -> dict[str, Any]:
    function = call.get("function")
    function = function if isinstance(function, dict) else {}
    return {
        "id": call.get("id"),
        "type": call.get("type", "function"),
        "function": {"name": function.get("name"), "arguments": "{}"},
    }


def redact_lines(data: bytes, chosen: set[int], needles: Sequence[str] = ()) -> tuple[bytes, int]:
    """`data` (JSON Lines of messages) with the messages in `chosen` redacted and damaged lines that
    hold a needle emptied; line breaks stay where they were. (new data, messages redacted)"""
    lines = data.split(b"\n")
    count = 0
    for number, raw in enumerate(lines):
        if not raw.strip():
            continue
        message, _ = parse_line(raw)
        if message is not None and message["idx"] in chosen and not message.get("purged"):
            lines[number] = json.dumps(redacted(message), ensure_ascii=False, separators=(",", ":")).encode()
            count += 1
        elif message is None and _holds(raw, needles):
            lines[number] = b""
    return b"\n".join(lines), count


def _holds(raw: bytes, needles: Sequence[str]) -> bool:
    text = raw.decode("utf-8", "replace")
    return any(needle in text for needle in needles)


@dataclass
class Redaction:
    messages: int = 0
    summaries: int = 0  # summaries dropped (context.json and summaries.jsonl)


def redact_session(
    store: SessionStore, session_id: str, person: str, settings: Settings, needles: Sequence[str] = ()
) -> Redaction:
    """Redact `person`'s messages of a shared session in place (see the module doc), under its lock."""
    from openclaw_cli.sessions.meta_file import read_meta_file

    outcome = Redaction()
    directory = store.session_dir(session_id)
    with store.session_lock(session_id).hold():
        meta = read_meta_file(directory / "meta.json")
        path = directory / "messages.jsonl"
        compressed = is_compressed(path)  # an archived transcript stays compressed (sessions/archive.py)
        data = read_transcript(path)  # plain JSONL; rewritten sealed again in an encrypted home
        messages = read_messages(path).messages
        chosen = set(runs_of(messages, person, speaker_of(settings, _key_of(meta))))
        texts = [*needles, *(t for m in messages if m["idx"] in chosen for t in _texts(m))]
        new_data, outcome.messages = redact_lines(data, chosen, texts)
        if new_data == data:
            return outcome
        first = min(chosen) if chosen else None
        outcome.summaries = _drop_summaries(directory, first)
        if outcome.summaries:
            meta["summaryCheckpoint"] = None
        # The checkpoint goes first: should the process die before meta.json is written again, readers
        # and writers count the rewritten file from its start rather than trust an offset into the old one.
        meta.pop("messagesBytes", None)
        atomic_write_json(directory / "meta.json", meta)
        if compressed:
            rewrite_archive(path, new_data)
            meta.update(meta_counters(read_messages(path).messages))
            meta["messagesBytes"] = 0  # any offset: a restore counts the file from its start
        else:
            on_disk = seal_new_lines(path, new_data)
            atomic_write_bytes(path, on_disk)
            meta.update(meta_counters(read_messages(path).messages))
            meta["messagesBytes"] = len(on_disk)
        atomic_write_json(directory / "meta.json", meta)
        _drop_token_counts(directory / TOKENS, chosen)
        for aside in directory.glob("messages.jsonl.*"):  # damaged copies doctor moved aside
            if aside.name == archive_path(path).name:
                continue  # the compressed transcript itself, redacted above
            old = aside.read_bytes()
            cleaned, _ = redact_lines(old, chosen, texts)
            if cleaned != old:
                atomic_write_bytes(aside, cleaned)
    return outcome


def _drop_summaries(directory: Path, first: int | None) -> int:
    """Drop every summary that covers message `first` or later-built ones over it; how many went."""
    if first is None:
        return 0
    dropped = 0
    context_path = directory / "context.json"
    try:
        context = json.loads(read_document(context_path))
    except (OSError, ValueError):
        context = None
    if isinstance(context, dict) and context.get("summary") is not None:
        checkpoint = context.get("summaryCheckpoint")
        if not isinstance(checkpoint, int) or checkpoint >= first:
            atomic_write_json(context_path, {"summary": None, "summaryCheckpoint": None})
            dropped += 1
    history = directory / SUMMARY_HISTORY
    if history.exists():
        kept: list[bytes] = []
        for raw in read_lines(history).split(b"\n"):
            if not raw.strip():
                continue
            try:
                checkpoint = json.loads(raw).get("summaryCheckpoint")
            except (ValueError, AttributeError):
                checkpoint = None
            if isinstance(checkpoint, int) and checkpoint < first:
                kept.append(raw)
            else:
                dropped += 1
        if kept:
            atomic_write_bytes(history, seal_new_lines(history, b"\n".join(kept) + b"\n"))
        else:
            history.unlink()
    return dropped


def _drop_token_counts(path: Path, chosen: set[int]) -> None:
    """tokens.json caches a hash of each message's content: the redacted ones' entries go."""
    try:
        cached = json.loads(path.read_bytes())
        counts = cached["counts"]
        assert isinstance(counts, dict)
    except FileNotFoundError:
        return
    except (OSError, ValueError, KeyError, TypeError, AssertionError):
        path.unlink(missing_ok=True)  # derived data: rebuilt when next needed
        return
    left = {idx: entry for idx, entry in counts.items() if not (idx.isdigit() and int(idx) in chosen)}
    if len(left) != len(counts):
        atomic_write_json(path, {**cached, "counts": left}, durable=False)


def delete_session(store: SessionStore, session_id: str) -> None:
    """Remove the person's own session for good, with its index entries and the lock files named after
    it (the key's lock file is named by a hash of the key, which holds the person's address)."""
    import hashlib

    from openclaw_cli.sessions.locks import remove_if_free
    from openclaw_cli.sessions.meta_file import read_meta_file

    key = None
    with contextlib.suppress(OpenclawError):
        key = read_meta_file(store.session_dir(session_id) / "meta.json").get("sessionKey")
    store.delete(session_id)
    doomed = [store.locks_dir / f"extract-{session_id}.lock"]
    if isinstance(key, str):
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
        if store.current_session_id(key) is None:  # no other session of the key (a reset's successor)
            doomed.append(store.locks_dir / f"key-{digest}.lock")
    for lock in doomed:
        remove_if_free(lock)
