"""The MCP server (issue 51): the person's memory served to Claude, Cursor, VS Code and any other Model
Context Protocol client, through the official `mcp` SDK (2.x, `MCPServer`), over stdio or streamable HTTP.

Inside this package `import mcp` is still the SDK: imports are absolute, and this package is only ever
reached as `openclaw_cli.mcp`. Nothing here imports the SDK at module level except server.py and
transport.py, which only `openclaw mcp` loads (the CLI's start-up path never does).

Modules: context.py (whom the server acts for), ops.py (the tools' work, through a running gateway or in
this process), local.py (the in-process services, warmed at start), remote.py (the home's gateway over
HTTP), views.py (the answers' shapes), resources.py (MEMORY.md, today's log, stats), server.py (tools,
resources and the prompt on MCPServer), transport.py (stdio and HTTP), client_config.py (the snippets
`openclaw mcp config` prints).

May import (in openclaw_cli/): core, config, identity, memory, agent, gateway.
"""
