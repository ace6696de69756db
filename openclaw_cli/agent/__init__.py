"""The agent loop: one turn from an inbound message to a stored, streamed reply (DESIGN.md "Agent loop").

- runtime.py is what the gateway and `openclaw chat` drive (one AgentRuntime per process, one call per turn);
  services.py holds each agent's long-lived session store, memory and extraction services.
- loop.py runs a turn's steps over turn_context.py's shared state (turn_types.py: what a turn is given and
  gives back); context.py builds what the model is sent, replies.py makes one model call, tools.py holds
  the memory tools it may call, steering.py the messages steered into a running turn, commands.py the
  slash commands.
- compaction.py and summarise.py fold older messages into a session's summary.
- chat_client.py and gateway_client.py are what `openclaw chat` talks to: this process or a gateway.

May import sessions/, memory/, config, identity, llm and the small shared modules; from gateway/ only
ws_client.py (the client side of `openclaw chat`); nothing from cli/ or forget/.
"""
