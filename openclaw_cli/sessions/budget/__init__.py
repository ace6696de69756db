"""What a model would be sent under a token budget: the summary plus the messages that fit (context.py),
importance scoring for `context.pruneStrategy: importance` (importance.py), token counts with tiktoken from
the BPE files litellm ships (tokens.py) and their per-session cache, tokens.json (token_counts.py).

May import (in sessions/): store.
"""
