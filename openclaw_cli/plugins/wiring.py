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
        _check_embedding_model(settings, set(host.registered.providers))
        llm.use_providers(providers_of(host))
    return host


def _check_embedding_model(settings: Settings, providers: set[str]) -> None:
    """A plugin provider serves chat models only: an embedding model named after one would fail on every
    write and search, in background threads too, so the process refuses to start with one line instead."""
    from openclaw_cli.core.errors import ConfigError

    embedding = settings.memory.embedding
    model = embedding.model or ""
    prefix = model.split("/", 1)[0] if "/" in model else ""
    if embedding.provider == "litellm" and prefix in providers:
        raise ConfigError(
            f"memory.embedding.model {model!r} names the plugin provider {prefix!r}, which serves chat "
            "models only",
            hint="set memory.embedding.model to a local model or an API embedding model",
        )
