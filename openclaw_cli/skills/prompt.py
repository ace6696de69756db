"""The skills block of the system prompt: names and descriptions only, within `skills.maxPromptChars`.

Past the budget, descriptions are shortened first (all to the same length, the longest that fits, down
to MIN_DESCRIPTION_CHARS); if the list still does not fit, the least recently used skills are left out
(never-used ones first, then by name) and the block says how many. The list is sorted by name, so the
same skills give the same text turn after turn (a provider's prompt cache keeps working).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from openclaw_cli.skills.model import Skill

HEADER = (
    "## Skills\n\n"
    "Skills are instruction sets for recurring tasks. When one fits the request, read it with the "
    "skill_read tool before acting, and follow it."
)
MIN_DESCRIPTION_CHARS = 40  # shorter than this a description no longer tells skills apart
ELLIPSIS = "…"


@dataclass(frozen=True)
class Block:
    text: str  # "" when no skill is available
    listed: tuple[str, ...]  # names in the block
    left_out: int  # available skills the budget left out
    shortened: bool  # descriptions were cut to fit


def build_block(skills: Sequence[Skill], last_used: Mapping[str, float], max_chars: int) -> Block:
    if not skills:
        return Block("", (), 0, False)
    full = max(len(skill.description) for skill in skills)
    if _length(skills, full, 0) <= max_chars:
        kept = sorted(skills, key=lambda s: s.name)
        return Block(_render(kept, full, 0), _names(kept), 0, False)
    # Least recently used last: they are the first to go when even short descriptions do not fit.
    by_use = sorted(skills, key=lambda s: (-last_used.get(s.name, 0.0), s.name))
    count = _most_fitting(by_use, max_chars)
    kept = sorted(by_use[:count], key=lambda s: s.name)
    left_out = len(skills) - count
    if not kept:
        text = _render([], 0, left_out)
        return Block(text if len(text) <= max_chars else "", (), left_out, False)
    cap = _longest_fitting(kept, left_out, max_chars, full)
    return Block(_render(kept, cap, left_out), _names(kept), left_out, cap < full)


def _most_fitting(by_use: Sequence[Skill], max_chars: int) -> int:
    """How many of the most recently used skills fit with the shortest descriptions (binary search:
    the length grows with the count, whatever the note says)."""
    total = len(by_use)
    if _length(by_use, MIN_DESCRIPTION_CHARS, 0) <= max_chars:
        return total
    low, high = 0, total - 1
    while low < high:
        middle = (low + high + 1) // 2
        if _length(by_use[:middle], MIN_DESCRIPTION_CHARS, total - middle) <= max_chars:
            low = middle
        else:
            high = middle - 1
    return low


def _longest_fitting(kept: Sequence[Skill], left_out: int, max_chars: int, full: int) -> int:
    """The longest description length (between MIN_DESCRIPTION_CHARS and `full`) that fits."""
    low, high = MIN_DESCRIPTION_CHARS, full
    while low < high:
        middle = (low + high + 1) // 2
        if _length(kept, middle, left_out) <= max_chars:
            low = middle
        else:
            high = middle - 1
    return low


def _length(skills: Sequence[Skill], cap: int, left_out: int) -> int:
    """len(_render(skills, cap, left_out)), at most (a cut description may lose trailing spaces), by
    arithmetic: the searches above ask it ~20 times for up to hundreds of skills."""
    lines = sum(4 + len(skill.name) + min(len(skill.description), cap) for skill in skills)
    note = _note(left_out)
    count = 2 + len(skills) + (1 if note else 0)
    return len(HEADER) + lines + len(note) + count - 1


def _render(skills: Sequence[Skill], cap: int, left_out: int) -> str:
    lines = [HEADER, ""]
    lines.extend(f"- {skill.name}: {_cut(skill.description, cap)}" for skill in skills)
    note = _note(left_out)
    if note:
        lines.append(note)
    return "\n".join(lines)


def _note(left_out: int) -> str:
    if not left_out:
        return ""
    return (
        f"({left_out} more skill{'s' if left_out != 1 else ''} left out of this list for space; "
        "skill_read still reads any by name.)"
    )


def _cut(text: str, cap: int) -> str:
    if len(text) <= cap:
        return text
    cut = text[: max(1, cap - 1)].rstrip()
    return cut + ELLIPSIS


def _names(skills: Sequence[Skill]) -> tuple[str, ...]:
    return tuple(skill.name for skill in skills)
