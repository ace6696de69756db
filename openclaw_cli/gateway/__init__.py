"""The gateway: one long-running process that serves the agents over WebSocket and HTTP (DESIGN.md "Gateway").

- server.py builds the Starlette app served by uvicorn; app.py holds what its handlers share, core.py the
  state (settings, agent runtime, lanes, inbox journal) with no HTTP in it; auth.py the token and its
  failure limit; routing.py picks the agent and session of a channel message; inbox.py journals every
  acknowledged message; config_watch.py applies changes to openclaw.json.
- http/: the two front doors (api.py, websocket.py), the CLI's reads over plain HTTP (reads.py), the
  limits on slow connections (limits.py) and what uvicorn logs of a client's mistake (log_lines.py).
- rpc/: the frames (protocol.py) and the methods both doors serve (methods.py, cron_methods.py,
  memory_reads.py, session_search.py, purge.py: `memory.purge` in the process that owns the journal).
- lanes/: one queue per session, one run at a time in it (queues.py), and the cap across lanes
  (run_limiter.py).
- channel_host/: the gateway's side of the channels (host.py starts them and is their Sink; recovery.py,
  util.py). A new channel goes in channels/, not here: the host only starts what channels/ offers.
- client/: the CLI's side, what other processes use to reach a gateway: start, stop, status (control.py),
  its pid file (pidfile.py), a WebSocket client (websocket.py), reads sent to it (reads.py).
- ui/: the Control UI.

It uses channels/ and scheduler/; they never import gateway/. Nothing from cli/.

May import (in openclaw_cli/): core, security, config, llm, identity, sessions, memory, skills, plugins,
agent, channels, scheduler, forget, doctor.
"""
