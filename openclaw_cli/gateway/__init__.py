"""The gateway: one long-running process that serves the agents over WebSocket and HTTP (DESIGN.md "Gateway")."""
