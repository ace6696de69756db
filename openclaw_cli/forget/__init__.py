"""Forgetting a person everywhere under the home: `openclaw memory purge --user` (DESIGN.md "Identity",
"Privacy"; seed 000 §12, the right to be forgotten).

- everywhere.py: the work itself, in one process: memory databases (memory/writing/purge.py), transcripts
  (sessions/upkeep/redact.py), the gateway journal, prompt histories, and the files files.py scrubs.
- stores.py: every memory store the home knows of (memory/known_stores.py): both backends, and the sources of
  `memory migrate-backend`; a server it cannot reach is named, never skipped.
- files.py: logs, exports and backups under the home that hold the person's words.
- report.py: the request and the report, as the CLI prints them and the gateway sends them.
- client.py: the one call the CLI makes: to the running gateway when there is one (it owns the journal,
  the session writers and the warm memory connections, gateway/rpc/purge.py), else everywhere.py here.

Nothing from cli/ or agent/. Imports nothing heavy at module level.

May import (in openclaw_cli/): core, config, identity, sessions, memory, channels, security.workspace_file
(sealed workspace notes), gateway.client.control,
gateway.client.pidfile, gateway.inbox (a running gateway does the work; its journal is read here).
"""
