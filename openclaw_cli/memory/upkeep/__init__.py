"""Care of the SQLite memory database as a file: backups and restore (online backup API), integrity checks,
salvage of a damaged file and recovery, rebuilding the derived keyword and vector indexes (`memory index`),
and the status report. This is the SQLite backend's file-level care, so unlike the use cases it works on
the apsw connection and keeps its own SQL (sqlite_schema, PRAGMAs, page-level reads, vec0 tables); what it
shares with the store (opening, migrations, transactions, the keyword row and vec0 helpers) it imports
from `memory.store.sqlite`. It may import store/, text/, embedding/ (to re-embed) and search/profiles; the
recovery module also agent_memory (what it asks of the service) and writing/purge (a restored backup must
forget again whom the user had purged). Nothing in store/ imports it. It exports `backup` (daily, manual and pre-migration
copies), `restore`, `recovery` (`memory recover`), `index` (check, repair, rebuild), `integrity`,
`salvage` and `status`.

May import (in memory/): text, embedding, store, search, writing, agent_memory.
"""
