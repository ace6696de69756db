"""The memory store, the bottom layer: records and their history, the keyword and vector indexes derived
from them, `meta`, the people memories name, and the one storage interface the rest of memory/ talks to
(`protocol.MemoryStorage`, its row types in `protocol_types` and record roles in `record_roles`), with its
SQLite implementation in `sqlite/` (connection, migrations, transactions, the keyword index, vec0 tables)
and its PostgreSQL one in `postgres/`. What the two backends say alike is written once, in `shared/`:
the statements in each backend's dialect (placeholder, null-safe equality), run by the base class both
storages share (record reads, history, people, workspace files, every row as stored). The root holds the
Protocol, the record types and what every engine shares: the record dataclasses (`records`, `record_rows`,
`record_roles`), the embedder types (`embedder`), the stored vector's layout (`layout`) and codec
(`vector_codec`), FSRS (`forgetting`), history, people and persons, and the session transcript index's
interface (`transcripts`; the rest of transcript search is memory/transcripts/). The warm vector matrix,
its scans, the centroid and the embedding cache are in `vectors/`; bulk loading in `bulk/`.
It may import only `openclaw_cli.core.errors`, `fsutil`, `paths`, `findings`, `memory.text` and itself, never search/,
writing/, embedding/, upkeep/, reflect/, portability/ or workspace/. It exports `MemoryStore` (what the
use cases hold: embedding on write, FSRS reviews, `storage`), `MemoryStorage` and `SqliteStorage`.

May import (in memory/): text.
"""
