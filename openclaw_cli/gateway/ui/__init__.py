"""The Control UI the gateway serves at /ui/ (issue 56): server-rendered Jinja2 pages with a little JavaScript,
views of the same methods and services as the CLI and the WebSocket, shipped as package data (templates/,
static/) so there is no build step. routes.py mounts them; sessions.py signs people in; render.py renders.

May import (in gateway/): app, auth, rpc.
"""
