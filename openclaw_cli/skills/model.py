"""The records of the skills package: a parsed skill, a problem found in a SKILL.md, a resolved entry."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

Tier = Literal["workspace", "home", "plugin"]
TIER_ORDER: tuple[Tier, ...] = ("workspace", "home", "plugin")  # first wins by name
SKILL_FILE = "SKILL.md"


@dataclass(frozen=True)
class SkillProblem:
    """Something wrong with one SKILL.md, at a line of it (1-based)."""

    path: Path
    line: int
    message: str

    def text(self) -> str:
        """The one line `skills check` prints: `file:line: message`."""
        return f"{self.path}:{self.line}: {self.message}"


@dataclass(frozen=True)
class Skill:
    """One valid SKILL.md; the body is not kept (read on demand, parse.read_body)."""

    name: str
    description: str
    folder: Path
    tier: Tier
    source: str  # the tier, or the plugin id of a plugin's folder
    size: int  # bytes of SKILL.md
    bins: tuple[str, ...] = ()  # requires.bins: each must be on PATH
    env: tuple[str, ...] = ()  # requires.env: each must be set, non-empty

    @property
    def path(self) -> Path:
        return self.folder / SKILL_FILE


@dataclass(frozen=True)
class Entry:
    """A skill as one agent sees it: available, or why not; and the tiers whose same name it hides."""

    skill: Skill
    available: bool
    reason: str | None = None
    shadows: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        skill = self.skill
        return {
            "name": skill.name,
            "description": skill.description,
            "tier": skill.tier,
            "source": skill.source,
            "available": self.available,
            "reason": self.reason,
            "size": skill.size,
            "path": str(skill.path),
            "requires": {"bins": list(skill.bins), "env": list(skill.env)},
            "shadows": list(self.shadows),
        }
