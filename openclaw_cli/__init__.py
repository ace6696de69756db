"""openclaw: a local-first memory runtime for a personal AI assistant.

Top-level modules are the shared ground every package stands on (settings in config.py, the home's
layout in paths.py, errors, identity, safe file writes); the packages are sessions (short-term memory),
memory (long-term memory), agent (one turn of the assistant), gateway (the long-running server), forget
(a person purged everywhere), docgen (man pages and completions) and cli (the thin Typer commands).
"""

__version__ = "0.1.0"
