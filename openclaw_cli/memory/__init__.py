"""Long-term memory (DESIGN.md "Memory"): what the assistant should still know next month.

Subpackages, lowest first; each may import only those before it (its `__init__` says which, and
tests/test_import_graph.py holds it to that): text (analysis of words and scripts), store (records in one
database per agent behind the storage interface, with what the stored data is made of), embedding (text
to vectors), search (hybrid retrieval and its stages), writing (dedup, merge, the one write path, reassign, purge), workspace (Markdown
files indexed as notes), transcripts (session transcript search, with its SQLite side in
store/sqlite/transcripts/), upkeep (index repair, integrity, backups, salvage). agent_memory.py is what the
use cases may ask of one agent's memory; service.py (MemoryService) is the one composition point that
builds the embedder, opens the stores and calls the rest. Above it: inject.py (the memory block of the
system prompt), checks.py (what `openclaw doctor` checks), extraction, reflect and portability.

Imports nothing: a command that needs only one module loads only that module.

May import (in openclaw_cli/): core, security, config, llm, identity, sessions, gateway.client.pidfile
(upkeep's recovery asks whether the home's gateway runs).
"""
