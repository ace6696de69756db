"""Which skill an agent gets for each name, and whether it may use it.

Precedence: the first tier holding a name wins (workspace, then home, then plugins in their order); the
others are shadowed. Availability: the agent's `agents.list[].skills` names it (when that list is set),
every `requires.bins` is on PATH, every `requires.env` variable is set. The environment is given by the
caller (the CLI or the gateway passes its own), never read here.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence

from openclaw_cli.skills.model import Entry, Skill


def resolve(
    skills: Sequence[Skill], env: Mapping[str, str], allowed: Sequence[str] | None
) -> list[Entry]:
    """One entry per name, sorted by name, the winning tier's skill in each."""
    winners: dict[str, Skill] = {}
    shadowed: dict[str, list[str]] = {}
    for skill in skills:  # in tier order: the first of a name wins
        if skill.name in winners:
            shadowed.setdefault(skill.name, []).append(skill.source)
        else:
            winners[skill.name] = skill
    allow = None if allowed is None else set(allowed)
    search_path = env.get("PATH", os.defpath)
    entries = []
    for name in sorted(winners):
        skill = winners[name]
        reason = gate(skill, env, search_path, allow)
        entries.append(Entry(skill, reason is None, reason, tuple(shadowed.get(name, ()))))
    return entries


def gate(
    skill: Skill, env: Mapping[str, str], search_path: str, allow: set[str] | None
) -> str | None:
    """Why the skill is not available (None: it is)."""
    if allow is not None and skill.name not in allow:
        return "not in this agent's agents.list[].skills"
    missing_bins = [name for name in skill.bins if shutil.which(name, path=search_path) is None]
    if missing_bins:
        return f"requires.bins not on PATH: {', '.join(missing_bins)}"
    missing_env = [name for name in skill.env if not env.get(name)]
    if missing_env:
        return f"requires.env not set: {', '.join(missing_env)}"
    return None
