"""Plugins (issue 50, seed 003 §8): five injection points (tools, channels, model providers, HTTP routes,
event hooks) through pluggy, as pytest, tox, datasette and llm do.

A plugin is a module (or any object) whose functions carry `@hookimpl`; the hooks it may implement are in
specs.py, their typed contexts in contexts.py. It is found through the entry-point group `openclaw.plugins`
(installed packages) or `plugins.load.paths` (files and folders), in that order (discovery.py), loaded and
held by a `PluginHost` (host.py): one per process, built from settings, passed to the code that calls it.

What may import this package: agent/ (through agent/plugin_hooks.py), gateway/, llm.py's provider table,
cli/plugins.py and doctor.py. It imports no heavy library; pluggy is ~15 ms and loads only when used.
"""

from openclaw_cli.plugins.contexts import (
    Block,
    GatewayEvent,
    MessageEvent,
    PromptEvent,
    Rewrite,
    SessionEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEndEvent,
)
from openclaw_cli.plugins.markers import PROJECT, hookimpl, hookspec

__all__ = [
    "PROJECT",
    "Block",
    "GatewayEvent",
    "MessageEvent",
    "PromptEvent",
    "Rewrite",
    "SessionEvent",
    "ToolCallEvent",
    "ToolResultEvent",
    "TurnEndEvent",
    "hookimpl",
    "hookspec",
]
