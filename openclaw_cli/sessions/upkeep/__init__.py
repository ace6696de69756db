"""What is done to sessions besides a conversation: `session export` / `session import` (portability.py),
forgetting one person in the transcripts for `memory purge --sessions` (redact.py), and `openclaw
doctor`'s checks (check.py) and its repair of sessions.json against the directories (index_repair.py).

May import (in sessions/): archive, ids, index, jsonl, keys, layout, locks, meta_file, store, writer.
"""
