"""The PostgreSQL + pgvector backend of the memory storage Protocol (store/protocol.py).

One Postgres schema per memory database (an agent's, or the shared user store), with the same tables as the
SQLite file: connection.py opens it, schema.py creates and migrates it, and storage.py implements the
Protocol over records.py, keyword.py and vectors.py, and over the statements both backends share
(store/shared/statements.py in the POSTGRES dialect, run by store/shared/storage.py). psycopg is imported only
here, and only when the configured backend is postgres.

May import (in memory/store/): embedder, protocol, record_rows, records, shared, vector_codec,
sqlite.records (the text hash both engines store).
"""
