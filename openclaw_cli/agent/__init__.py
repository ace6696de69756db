"""The agent loop: one turn from an inbound message to a stored, streamed reply (DESIGN.md "Agent loop").

- runtime.py is what the gateway and `openclaw chat` drive (one AgentRuntime per process, one call per turn);
  services.py holds each agent's long-lived session store, memory and extraction services (after_turn.py:
  the work a turn leaves for after its reply; token_memo.py: recent sessions' token counts); warm.py loads
  what a first turn needs before it is asked for.
- turn/: one turn's steps. loop.py runs them over state.py's shared TurnContext (requests.py: what a turn
  is given and gives back); replies.py makes one model call, history.py reads the session once,
  memory_steps.py writes "remember this" and schedules extraction, plugin_hooks.py calls the plugins'
  hooks and tools, steering.py holds messages steered into a running turn, commands.py the slash commands,
  stages.py where the time goes, private_notes.py whether the owner's notes may be used.
- tools/: the tools the model may call (builtin.py), the agent's own Markdown notes (own_notes.py) and
  memory_search over sessions (search_sources.py). A plugin's tool is registered through plugins/.
- context.py builds what the model is sent; compaction.py and summarise.py fold older messages into a
  session's summary.
- clients/: what `openclaw chat` talks to, this process (chat.py) or a gateway (gateway.py).

Nothing from cli/ or forget/.

May import (in openclaw_cli/): core, security, config, llm, identity, sessions, memory, skills, plugins,
gateway.client.websocket (the client side of `openclaw chat`).
"""
