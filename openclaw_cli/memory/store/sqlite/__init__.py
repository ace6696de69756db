"""The SQLite backend of the memory store: every statement only the SQLite file runs lives here (those both
backends run alike are store/shared/statements.py, in the SQLite dialect).

`connection` opens a file (apsw, sqlite-vec, WAL, access and damage checks), `migrations` keeps its schema,
`meta` its write transactions and `meta` table, `file_copy` the copy a migration makes first; `records`
(records and history), `keyword` (the FTS5 index) and `vec` (the vec0 tables) hold the statements that
`storage.SqliteStorage`, the implementation of store/protocol.py, runs beside store/shared/storage.py.
`transcripts` (with its schema in `transcript_schema`) is the session transcript index, a sibling file
(store/transcripts.py). It may import store/'s own modules and memory/text only; upkeep/ builds its
file-level care on it.

May import (in memory/store/): embedder, layout, people, protocol, record_rows, records, shared,
transcripts, vector_codec, vectors.centroid (a migration computes the centroid of the stored vectors).
"""
