"""Whether a turn may use the owner's workspace notes: MEMORY.md and the daily logs as files in the prompt,
and their indexed chunks in the memory block and the memory tools (workspace/markdown_index.py).

The notes are the owner's private memory (seed 003 §4.3: MEMORY.md loads only in the main private session).
Other people read the prompt's effect in the replies, so the notes are used only where nobody but the owner
reads them: the owner speaking in the main session or a direct chat (identity.is_private) that is the owner's
own (a direct key's peer is the owner) and whose history holds no other person's message and no anonymous
one. A group, or a session the owner shares with anyone, never gets them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import OpenclawError
from openclaw_cli.identity.person_ids import canonical_person
from openclaw_cli.identity.persons import Identity, for_key, is_private, owner_id

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Settings
    from openclaw_cli.sessions.keys import SessionKey


def notes_private(
    settings: Settings, key: SessionKey, person: str | None, history: Sequence[dict[str, Any]]
) -> bool:
    """True when the owner's notes may serve this turn of `person` in the session `key` with `history`."""
    owner = owner_id(settings)
    if person != owner or not is_private(key, Identity(person, owner=True)):
        return False
    if key.kind == "direct" and not _owners_dm(settings, key, owner):
        return False  # the owner speaking in somebody else's DM: that person reads the replies
    from openclaw_cli.sessions.upkeep.redact import speaker_of

    speaker = speaker_of(settings, key)
    return all(speaker(m) == owner for m in history if m.get("role") == "user" and not m.get("purged"))


def _owners_dm(settings: Settings, key: SessionKey, owner: str) -> bool:
    """Whether a direct key is a DM with the owner. Its peer is an address's peer id, or (when the address
    is linked) the linked name itself, which sessions/keys.py puts in the key in its place."""
    try:
        if for_key(settings, key).person == owner:
            return True
        return (
            key.peer_id is not None
            and canonical_person(key.peer_id, settings.session.identity_links) == owner
        )
    except OpenclawError:
        return False
