"""Extraction (seed 000 §6.1, seed 003 §4.1): long-term memories found in conversations. A session's new
messages go to the model in bounded chunks (prompt.py) and explicit statements ("remember that ...") are
found without one (patterns.py); both become candidates (candidates.py) for the write path. Runs coalesce
per session on one background worker (schedule.py) and remember how far they got (state.py).

May import (in memory/): text, store, writing, agent_memory, service (run.py opens a worker's own service).
Exports: run (ExtractionService, ExtractionReport, extract_session), patterns.asks_to_remember.
"""
