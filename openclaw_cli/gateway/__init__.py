"""The gateway: one long-running process that serves the agents over WebSocket and HTTP (DESIGN.md "Gateway").

- server.py builds the Starlette app served by uvicorn; app.py holds what its handlers share, core.py the
  state (settings, agent runtime, lanes, inbox journal) with no HTTP in it.
- http_api.py and websocket.py are the two front doors (http_reads.py serves the CLI's reads over plain
  HTTP), protocol.py the frames, methods.py the WebSocket methods, auth.py the token and its failure
  limit, limits.py the limits on slow connections, log_lines.py what uvicorn logs of a client's mistake.
- lanes.py queues each session's runs and run_limiter.py caps them across lanes; routing.py picks the agent
  and session of a channel message; inbox.py journals every acknowledged message; config_watch.py applies
  changes to openclaw.json; purge.py runs `memory.purge` in the gateway.
- control.py, pidfile.py and ws_client.py are the CLI's side: start, stop, find and call a gateway;
  remote_reads.py sends `memory search`, `memory inject` and `session search` to a running gateway of the
  same version, where memory_reads.py reads their params and runs them (with the model when --expand asks
  for it).

May import agent/, sessions/, memory/, forget/ (purge.py only), config and the small shared modules;
nothing from cli/.
"""
