"""Starting a process's plugins: load them from settings, and route `<provider>/` models to the providers
they registered (llm.py). The one place that connects the host to the rest of the process."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from openclaw_cli.plugins.host import PluginHost, load_plugins

if TYPE_CHECKING:
    from openclaw_cli.config.models import Settings


def start_plugins(settings: Settings, home_root: Path) -> PluginHost:
    from openclaw_cli.llm import calls as llm
    from openclaw_cli.plugins.providers import providers_of

    host = load_plugins(settings.plugins, home_root)
    if host.registered.providers:
        llm.use_providers(providers_of(host))
    return host
