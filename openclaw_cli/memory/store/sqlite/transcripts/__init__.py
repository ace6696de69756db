"""The transcript index on SQLite (`transcripts.sqlite`, a sibling of the memory database): every statement
(statements.py), the schema and opening the file (schema.py), a search's filter as SQL (filters.py), and
the turns' int8 vectors and sign bits (vectors.py), and
the names of the people who sent turns (senders.py). The engine-neutral side is memory/transcripts/.

May import (in memory/store/sqlite/): connection, meta, records.
"""
