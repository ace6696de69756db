"""The memory store, the bottom layer: records and their history, the keyword and vector indexes derived
from them, `meta`, the people memories name, and the one storage interface the rest of memory/ talks to
(`protocol.MemoryStorage`, its row types in `protocol_types` and record roles in `record_roles`), with its
SQLite implementation in `sqlite/` (connection, migrations, transactions, the keyword index, vec0 tables)
and its PostgreSQL one in `postgres/`. What the two backends say alike is written once: the statements in
`statements`, in each backend's dialect (placeholder, null-safe equality), run by the base class both
storages share (`shared_storage`: record reads, history, people, workspace files, every row as stored).
It also holds what the stored data is made of and shared by the layers above: the record
dataclasses (`records`, `record_rows`), the embedder types (`embedder`), the stored vector's layout
(`layout`), its codec, the vectors' mean (`centroid`), the warm matrix and the embedding cache; and the session transcript index's interface (`transcripts`; the
rest of transcript search is memory/transcripts/).
It may import only `openclaw_cli.core.errors`, `fsutil`, `paths`, `findings`, `memory.text` and itself, never search/,
writing/, embedding/, upkeep/, reflect/, portability/ or workspace/. It exports `MemoryStore` (what the
use cases hold: embedding on write, FSRS reviews, `storage`), `MemoryStorage` and `SqliteStorage`.

May import (in memory/): text.
"""
