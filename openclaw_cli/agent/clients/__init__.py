"""What `openclaw chat` talks to, with the same calls whether the turn runs in this process (chat.py, over
an AgentRuntime) or in a running gateway (gateway.py, the WebSocket protocol of DESIGN.md "Gateway").

May import (in agent/): compaction, runtime, tools, turn, warm.
"""
