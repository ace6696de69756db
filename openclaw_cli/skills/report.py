"""The `openclaw skills` commands' core: one function per command, each returning plain data."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from openclaw_cli.skills.service import AgentSkills, PluginDirs, SkillView, check_problems

if TYPE_CHECKING:
    from openclaw_cli.config.models import Settings
    from openclaw_cli.core.paths import Home


def agent_view(
    home: Home, agent_id: str, settings: Settings, env: Mapping[str, str], plugin_dirs: PluginDirs = ()
) -> SkillView:
    """The agent's skills now, as its next turn would see them (`settings` as the agent sees them)."""
    return AgentSkills(home, agent_id, env, plugin_dirs).view(settings)


def list_skills(
    home: Home, agent_id: str, settings: Settings, env: Mapping[str, str], plugin_dirs: PluginDirs = ()
) -> list[dict[str, Any]]:
    """Every skill name the agent has, its winning tier, whether it is available and why not."""
    return [entry.to_dict() for entry in agent_view(home, agent_id, settings, env, plugin_dirs).entries]


def show_skill(
    home: Home,
    agent_id: str,
    settings: Settings,
    env: Mapping[str, str],
    name: str,
    plugin_dirs: PluginDirs = (),
) -> dict[str, Any]:
    """One skill's entry and its body (at most skills.maxReadChars); NotFound for an unknown name."""
    view = agent_view(home, agent_id, settings, env, plugin_dirs)
    entry = view.entry(name)
    body, cut = view.body(entry.skill)
    return {**entry.to_dict(), "body": body, "truncated": cut}


def check_skills(
    home: Home, agent_id: str, settings: Settings, env: Mapping[str, str], plugin_dirs: PluginDirs = ()
) -> list[str]:
    """Every problem, one line each (`file:line: message`); empty when every SKILL.md is valid."""
    view = agent_view(home, agent_id, settings, env, plugin_dirs)
    return check_problems(view, settings, agent_id, home.config_file)
