"""One agent's effective settings: its `agents.list[]` entry laid over the global ones.

An entry may name the agent's own workspace (over `memory.workspace`) and its own model (over `llm.model`,
with `apiBase` and `apiKey` over `llm.apiBase` and `llm.apiKey`). Everything that works for one agent (its turns, extraction, summaries,
reflection, the workspace files and notes, the markdown index) is given `for_agent(settings, id)` and reads
the plain `settings.memory.workspace` and `settings.llm.*` keys, so no other module needs to know about
entries. Resolving the workspace path itself (`~`, relative to the home) is memory/workspace/files.py's job.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openclaw_cli.config.loading import AgentEntry, Settings


def agent_entry(settings: Settings, agent_id: str) -> AgentEntry | None:
    """The `agents.list[]` entry of `agent_id` (ids compare case-insensitively, as agent ids are
    lower-cased), or None when the agent has none."""
    wanted = agent_id.lower()
    for entry in settings.agents.entries:
        if entry.id.lower() == wanted:
            return entry
    return None


def for_agent(settings: Settings, agent_id: str) -> Settings:
    """`settings` as `agent_id` sees them: a copy with its entry's workspace and model in place of the
    global `memory.workspace` and `llm.*`; `settings` itself when the agent sets none of them.

    An agent that sets `model` extracts with its `extractModel`, else with that model: the global
    `llm.extractModel` is chosen for the global model (and may live on another server).
    """
    entry = agent_entry(settings, agent_id)
    if entry is None:
        return settings
    update: dict[str, Any] = {}
    if entry.workspace:
        update["memory"] = settings.memory.model_copy(update={"workspace": entry.workspace})
    llm: dict[str, Any] = {}
    if entry.model:
        llm["model"] = entry.model
        llm["extract_model"] = entry.extract_model
    elif entry.extract_model:
        llm["extract_model"] = entry.extract_model
    if entry.api_base:
        # Another server: the global key is not sent there, only the entry's own (or none).
        llm["api_base"] = entry.api_base
        llm["api_key"] = entry.api_key
    elif entry.api_key:
        llm["api_key"] = entry.api_key
    if llm:
        update["llm"] = settings.llm.model_copy(update=llm)
    return settings.model_copy(update=update) if update else settings


def with_model(settings: Settings, agent_id: str, model: str) -> Settings:
    """`settings` with `model` as `agent_id`'s chat model for one run (`openclaw chat -m`): in place of
    `llm.model`, and of its entry's own model when it names one, which would otherwise win."""
    update: dict[str, Any] = {"llm": settings.llm.model_copy(update={"model": model})}
    entry = agent_entry(settings, agent_id)
    if entry is not None and entry.model:
        entries = [
            e.model_copy(update={"model": model}) if e is entry else e for e in settings.agents.entries
        ]
        update["agents"] = settings.agents.model_copy(update={"entries": entries})
    return settings.model_copy(update=update)
