"""Indexing one agent's workspace Markdown as the owner's note records (MemoryService.sync_workspace):
when there is anything to do, in the agent's database, with the searched words' caches emptied after."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from openclaw_cli.memory.store.memory_store import MemoryStore
    from openclaw_cli.memory.workspace.markdown_index import SyncReport


def sync_notes(
    root: Path,
    path: Path,
    open_store: Callable[[Path], MemoryStore],
    damage_guard: Callable[[], AbstractContextManager[None]],
    agent_id: str,
    owner: str,
    forget_words: Callable[[], list[Path]],
    progress: Callable[[int], None] | None = None,
    *,
    only_if_dirty: bool = False,
) -> SyncReport | None:
    """Sync the workspace at `root` into the database at `path` (see MemoryService.sync_workspace)."""
    from openclaw_cli.memory.workspace import markdown_index

    if not path.exists() and not markdown_index.workspace_files(root, []):
        return None  # nothing to index, and no database to create for it
    with damage_guard():
        store = open_store(path)
        if only_if_dirty and not markdown_index.is_dirty(store, root):
            markdown_index.own_strays(store, owner)
            return None
        report = markdown_index.sync(store, root, agent_id, owner, progress)
    if report.removed or report.indexed:  # notes went or were replaced: the tables may hold their words
        left = forget_words()
        if left:
            report.warning = report.warning or f"could not empty the searched words' cache: {left[0]}"
    return report
