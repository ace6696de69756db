"""`openclaw session`: commands.py is the group (list, show, append, reset and the rest it holds itself)
and registers its siblings' commands: search.py (transcript search with the memory search's engine),
portability.py (export, import, key) and upkeep.py (sweep, context, compact). helpers.py is what they share:
the chosen agent's session store and manager. The work is in sessions/ and memory/transcripts/.

May import (in cli/): common, passphrase_edge, progress, job_lock, memory.helpers (session search opens the
agent's memory service as memory's commands do).
"""
