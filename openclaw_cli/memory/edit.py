"""Correcting a memory by hand: `openclaw memory edit` and the Control UI's edit form both call `edit_memory`.

The record keeps its id; its text, category or attribute change in one transaction with an `update` history
row that holds the old value (merge.apply, the write every merge takes), so `memory history` shows what was
corrected and when. A changed text is embedded again (a pending vector when no embedder can be had, filled
by `memory index`), and the words the caches kept of the old text are forgotten, as a delete does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.memory.store.records import check_text, utc_now, validate_attribute, validate_category

if TYPE_CHECKING:
    from openclaw_cli.memory.service import MemoryService
    from openclaw_cli.memory.store.records import MemoryRecord

EDIT_REASON = "edited by hand"


@dataclass(frozen=True)
class MemoryEdit:
    """What to change; None leaves a field as it is. `attribute=""` removes the attribute."""

    record_id: str
    text: str | None = None
    category: str | None = None
    attribute: str | None = None
    reason: str | None = None


def edit_memory(service: MemoryService, edit: MemoryEdit, max_text_chars: int) -> tuple[MemoryRecord, bool]:
    """(the record as it is now, whether anything changed). NotFound for an unknown id; InvalidInput for
    bad values, a workspace note (its Markdown file is the truth: edit the file) or an edit that names
    nothing to change."""
    from openclaw_cli.memory.cached_words import require_forgotten
    from openclaw_cli.memory.text.analysis import detect_language, l0_hash

    if edit.text is None and edit.category is None and edit.attribute is None:
        raise InvalidInput("nothing to change", hint="give a new text, category or attribute")
    text = check_text("the text", edit.text, max_text_chars, required=True) if edit.text is not None else None
    category = validate_category(edit.category) if edit.category is not None else None
    store = next((s for s in service.existing_stores() if s.exists(edit.record_id)), None)
    if store is None:
        service.get(edit.record_id)  # raises the NotFound every read gives
        raise AssertionError("unreachable")
    with service.damage_guard(), store.storage.transaction():
        old = store.get(edit.record_id)
        if old.workspace_note:
            path = (old.source or {}).get("path")
            raise InvalidInput(
                f"{old.id} is a line of {path}: edit that file",
                hint="`memory workspace sync` indexes it again",
            )
        update: dict[str, object] = {}
        if text is not None and text != old.l0:
            update.update(l0=text, language=detect_language(text), l0_hash=l0_hash(text))
        if category is not None and category != old.category:
            update["category"] = category
        if edit.attribute is not None:
            attribute = validate_attribute(edit.attribute)
            if attribute != old.attribute:
                update["attribute"] = attribute
        if not update:
            return old, False
        update["updated_at"] = utc_now()
        new = old.model_copy(update=update)
        vector = None
        if "l0" in update:
            embedder, _why = store.usable_embedder()
            vector = store.embed_cached(embedder, [new.l0])[0] if embedder is not None else None
        elif old.vector_status == "ready":
            rowid = store.rowid(old.id)
            vector = store.storage.read_vectors([rowid]).get(rowid)
        new = new.model_copy(update={"vector_status": "ready" if vector is not None else "pending"})
        store.replace(new, vector, edit.reason or EDIT_REASON)  # re-inserted: every index follows
    if "l0" in update:  # the old text's words must not stay in the caches (as after a delete)
        require_forgotten(service.forget_words(), f"edited {old.id}")
    return store.get(edit.record_id), True
