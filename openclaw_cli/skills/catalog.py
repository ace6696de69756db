"""Finding SKILL.md files in the tiers' folders, and a cache that re-reads only what changed.

Every turn scans again, so an added or edited SKILL.md is seen by the next turn without a restart. The
scan lists each tier's folder and stats each `<name>/SKILL.md`; a file whose (mtime, size, inode) is the
one parsed before is not read again, so a turn with nothing changed costs one directory listing per tier
and one stat per skill (benchmarks/test_bench_skills.py measures it), and never loads the YAML parser.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from openclaw_cli.skills.model import SKILL_FILE, Skill, SkillProblem, Tier
from openclaw_cli.skills.parse import parse_skill

# A stat's identity of a file's content: a rewrite changes mtime or size, an atomic replace the inode.
FileKey = tuple[int, int, int, int]


@dataclass(frozen=True)
class Root:
    """One folder of skill folders, of one tier (`source` names the plugin of a plugin's folder)."""

    tier: Tier
    source: str
    path: Path


@dataclass(frozen=True)
class Found:
    """One scan: every valid skill in tier order (a name may appear in several tiers), every problem."""

    skills: tuple[Skill, ...]
    problems: tuple[SkillProblem, ...]


@dataclass
class _Parsed:
    key: FileKey
    skill: Skill | None
    problems: list[SkillProblem]


@dataclass
class SkillCatalog:
    """The parsed SKILL.md files of one process, keyed by path; safe to share between turn threads.

    Paths are plain strings here: pathlib's object per path was most of an unchanged scan's cost."""

    _files: dict[tuple[str, Tier, str, int], _Parsed] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    parses: int = 0  # SKILL.md files parsed so far (the tests see a cached scan parse nothing)

    def scan(self, roots: Sequence[Root], max_bytes: int) -> Found:
        skills: list[Skill] = []
        problems: list[SkillProblem] = []
        seen: set[tuple[str, Tier, str, int]] = set()
        for root in roots:
            base = os.fspath(root.path)
            for name in _skill_folders(base):
                path = os.path.join(base, name, SKILL_FILE)
                try:
                    info = os.stat(path)
                except FileNotFoundError:
                    continue  # a folder without SKILL.md is not a skill (it may hold its files)
                except OSError as exc:
                    problems.append(SkillProblem(Path(path), 1, f"cannot read: {exc.strerror}"))
                    continue
                key: FileKey = (info.st_mtime_ns, info.st_size, info.st_ino, info.st_dev)
                slot = (path, root.tier, root.source, max_bytes)
                seen.add(slot)
                parsed = self._files.get(slot)  # a dict read is atomic; writes take the lock
                if parsed is None or parsed.key != key:
                    skill, found = parse_skill(root.path / name, root.tier, root.source, max_bytes)
                    parsed = _Parsed(key, skill, found)
                    with self._lock:
                        self._files[slot] = parsed
                        self.parses += 1
                if parsed.skill is not None:
                    skills.append(parsed.skill)
                problems.extend(parsed.problems)
        with self._lock:
            if len(seen) != len(self._files):
                for gone in set(self._files) - seen:  # deleted skills are forgotten
                    del self._files[gone]
        return Found(tuple(skills), tuple(problems))


def _skill_folders(root: str) -> list[str]:
    """The names of the sub-folders of `root` (symlinked ones too: a skill may be linked in), sorted;
    none when `root` does not exist. Hidden folders are skipped (`.git`, editors' leftovers)."""
    try:
        with os.scandir(root) as entries:
            return sorted(entry.name for entry in entries if not entry.name.startswith(".") and _is_dir(entry))
    except OSError:
        return []  # no such folder, or an unreadable one: it holds no skills we can offer


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False
