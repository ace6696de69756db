"""Session transcript search (issue 24), in one place: the index kept in step with the session files and searched as a
given person (index.py), reading one session's files from a byte offset (files.py), whose transcripts a search may
read and its date bounds (filters.py), the memory search's evidence model over turns (search.py), a person named in
a query searched as who said it (speakers.py), the turns' vectors ranked in memory (vectors.py), and `memory index
--check` for it (check.py). Its storage interface is store/transcripts.py and its SQLite side
store/sqlite/transcripts/ (the index is always a SQLite file beside the memory database, so store/postgres/ has no
transcript side).

May import (in memory/): text, store, search, passage_memo.
"""
