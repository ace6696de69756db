"""An agent's workspace (seed 003 §4.1, §4.3): the Markdown files a session starts with and the notes the
user keeps (files.py), and MEMORY.md and memory/*.md indexed into the same search as `note` records,
kept in step with the files (markdown_index.py; sync.py runs it for one agent's database).

May import (in memory/): text, embedding, store, writing.
Exports: files (workspace_dir, session_files, append_note), markdown_index (sync, SyncReport, workspace_files).
"""
