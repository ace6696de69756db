"""The client side of a gateway, for other processes (the CLI, `openclaw chat`, MCP, forget/, memory
upkeep): start it in the background, stop it, its status and health, call a method (control.py); where a
home's gateway says it runs and whether it answers (pidfile.py); opening a WebSocket to it (websocket.py);
`memory search`, `memory inject` and `session search` sent to a running gateway of the same version
(reads.py).

May import (in gateway/): auth.
"""
