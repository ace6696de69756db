"""The gateway's front doors on its one port: the HTTP endpoints (api.py: health probes, the
OpenAI-compatible chat endpoint, the channel hook, `POST /rpc/METHOD`), one WebSocket connection
(websocket.py), the CLI's reads over plain HTTP (reads.py), the limits on connections that owe a request
(limits.py, extending uvicorn's h11 protocol) and uvicorn's log of a client's mistake cut to a line
(log_lines.py).

May import (in gateway/): app, auth, lanes, routing, rpc.
"""
