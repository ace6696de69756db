"""Helpers for the skills tests and benchmarks: SKILL.md files written into a home's tiers."""

from __future__ import annotations

import json
from pathlib import Path

from openclaw_cli.core.paths import Home


def workspace_skills(home: Path, agent: str = "main") -> Path:
    return Home(home).workspace_dir(agent) / "skills"


def home_skills(home: Path) -> Path:
    return home / "skills"


def write_skill(
    base: Path,
    name: str,
    description: str = "Does one recurring task.",
    *,
    front: str = "",
    body: str = "Step 1: do it.\n",
    folder: str | None = None,
) -> Path:
    """`base/<folder or name>/SKILL.md` with that front matter (`front` adds lines) and body."""
    directory = base / (folder or name)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "SKILL.md"
    quoted = json.dumps(description)  # JSON is YAML: a description may hold ': '
    path.write_text(f"---\nname: {name}\ndescription: {quoted}\n{front}---\n{body}", encoding="utf-8")
    return path


def many_skills(base: Path, count: int, description_chars: int = 120) -> list[str]:
    """`count` valid skills with descriptions of about `description_chars` characters."""
    names = []
    for n in range(count):
        name = f"skill-{n:03d}"
        words = f"Handles recurring task number {n} for the user, step by step, with care. "
        description = (words * (description_chars // len(words) + 1))[:description_chars].strip()
        write_skill(base, name, description)
        names.append(name)
    return names
