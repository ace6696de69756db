"""Plugins (issue 50, seed 003 §8): five injection points (tools, channels, model providers, HTTP routes,
event hooks) through pluggy, as pytest, tox, datasette and llm do.

A plugin is a module (or any object) whose functions carry `@openclaw_cli.plugins.hookimpl`; the hooks it
may implement are in specs.py, their typed contexts and answers (`Rewrite`, `Block`) in contexts.py. It is
found through the entry-point group `openclaw.plugins` (installed packages) or `plugins.load.paths` (files
and folders), in that order (discovery.py), loaded and held by a `PluginHost` (host.py): one per process,
built from settings (wiring.py), passed to the code that calls it (AgentRuntime, GatewayCore).

Only the markers live here (pluggy is ~15 ms to import, and loads only when plugins are used).

May import (in openclaw_cli/): core, config, llm, agent.tools.builtin (a plugin's tool is checked
against the built-in tools' names).
"""

import pluggy

PROJECT = "openclaw"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

__all__ = ["PROJECT", "hookimpl", "hookspec"]
