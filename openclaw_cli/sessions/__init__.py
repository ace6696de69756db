"""Sessions (short-term memory): one conversation's history per session key, as JSON Lines under the home.

- keys.py builds and parses session keys, ids.py session ids; index.py reads sessions.json, layout.py
  says what a session directory holds and keeps meta.json's checkpoint, meta_file.py reads meta.json.
- store.py (SessionStore) owns one agent's sessions, writer.py appends to messages.jsonl, locks.py holds
  the inter-process locks; lifecycle.py (SessionManager) decides resets, dormancy and archiving.
- context.py picks what a model is sent (tokens.py, token_counts.py count tokens); portability.py is
  `session export/import`; redact.py forgets a person in transcripts; check.py and index_repair.py are
  `openclaw doctor`'s checks and repairs; reroutes.py counts the messages kept out of the owner's main
  session (claims.py decides them), for `doctor` and `gateway status`.

May import config, identity and the small shared modules (errors, fsutil, paths, findings, textcheck);
nothing from agent/, gateway/, memory/, forget/ or cli/. Kept empty of imports on purpose:
`openclaw session list` imports only sessions.index.
"""
