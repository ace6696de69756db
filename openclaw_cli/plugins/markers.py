"""The pluggy markers: `hookimpl` is what a plugin decorates its hooks with."""

from __future__ import annotations

import pluggy

PROJECT = "openclaw"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)
