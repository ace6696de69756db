"""Remote models: the only package that imports litellm (lazily, inside the calls that need it).

calls.py is the client (routing, retries, embeddings, rerankers, completions, JSON replies, plugin
providers), openai_models.py serves `openai/...` models through the openai package without litellm,
stream.py streams chat completions with tools for the agent loop, reply.py checks a JSON reply against
its schema, usage.py prices a call's tokens, errors.py holds the errors callers catch and the ones a retry
may fix.

May import (in openclaw_cli/): core.
"""
