"""Sessions (short-term memory): keys, store, lifecycle, tokens, context, doctor checks.

Kept empty of imports on purpose: `openclaw session list` imports only sessions.index.
Entry points: keys.dm_key/group_key/parse_key/build_key, store.SessionStore, lifecycle.SessionManager,
context.session_context, check.check_sessions, tokens.count_tokens.
"""
