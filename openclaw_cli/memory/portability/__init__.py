"""Moving memory between homes and machines, and in and out of shell pipelines (seed 000 §9): the export
format and its checks (format.py), streaming export files of any size (files.py, stream.py), export and
import with their conflict rules (transfer.py), `memory migrate` for older format versions (migrate.py),
and the JSON Lines input of `memory add --batch` and `memory search --batch` (batch.py); `memory
migrate-backend` between SQLite and PostgreSQL (backends.py).

May import (in memory/): text, embedding, store, search, writing, agent_memory, service, known_stores.
Exports: transfer (export_memories, import_memories, count_exportable, InvalidExport), files.open_export,
format.FORMAT_VERSION, migrate.migrate_file, batch (parse_add_lines, parse_search_line).
"""
