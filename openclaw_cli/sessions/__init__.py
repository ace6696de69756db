"""Sessions (short-term memory): one conversation's history per session key, as JSON Lines under the home.

- keys.py builds and parses session keys, ids.py session ids; index.py reads sessions.json, layout.py
  says what a session directory holds and keeps meta.json's checkpoint, meta_file.py reads meta.json.
- store.py (SessionStore) owns one agent's sessions, writer.py appends to messages.jsonl, jsonl.py reads
  it without crashing on damage, locks.py holds the inter-process locks; lifecycle.py (SessionManager)
  decides resets, dormancy and archiving; reroutes.py counts the messages kept out of the owner's main
  session (identity/claims.py decides them), for `doctor` and `gateway status`.
- budget/: what a model is sent under a token budget (context.py, importance.py) and token counts
  (tokens.py, token_counts.py).
- upkeep/: `session export/import` (portability.py), forgetting a person in transcripts (redact.py), and
  `openclaw doctor`'s checks and repairs (check.py, index_repair.py).

Nothing from agent/, gateway/, memory/, forget/ or cli/. Kept empty of imports on purpose:
`openclaw session list` imports only sessions.index.

May import (in openclaw_cli/): core, security, config, identity.
"""
