"""The tools the model may call in a turn: the built-in memory and session tools (builtin.py), the agent's
own Markdown memory, `memory_note` and "remember this" (own_notes.py), and memory_search over sources
other than memory (search_sources.py). A plugin adds a tool through plugins/ (registry.py), not here.

May import (in agent/): nothing.
"""
