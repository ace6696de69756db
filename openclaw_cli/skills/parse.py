"""One SKILL.md: YAML front matter between `---` lines, then the Markdown body.

The front matter needs `name` (which must be the folder's name: names become paths, and one name means
one folder) and `description`; `requires` may list `bins` (on PATH) and `env` (set) the skill needs.
Other keys (license, metadata...) are allowed and ignored. Every problem is reported with its line, and a
file over `skills.maxFileBytes` is refused from its size alone, never read whole.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

from openclaw_cli.skills.model import SKILL_FILE, Skill, SkillProblem, Tier

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")  # lower case: one skill per name on any file system
ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
BIN_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,127}$")  # a command name, not a path
MAX_DESCRIPTION_CHARS = 1024  # one paragraph: it is what every prompt carries
FENCE = "---"


class SkillFileError(Exception):
    """A SKILL.md that cannot be read at all (size, type, encoding): one problem at line 1."""


def read_text(path: Path, max_bytes: int) -> tuple[str, int]:
    """The decoded text of a regular file of at most `max_bytes`, and its size.

    O_NONBLOCK: a FIFO named SKILL.md must not hang a turn; its type is refused after the open."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise SkillFileError(f"cannot read: {exc.strerror}") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SkillFileError("not a regular file")
        if info.st_size > max_bytes:
            raise SkillFileError(
                f"file is {info.st_size} bytes, over skills.maxFileBytes ({max_bytes}); "
                "move long material into other files of the skill's folder"
            )
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(max_bytes + 1)
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # grew since the stat
        raise SkillFileError(f"file is over skills.maxFileBytes ({max_bytes})")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillFileError(f"not valid UTF-8 (byte {exc.start})") from exc
    return text.removeprefix("\ufeff"), len(data)


def parse_skill(
    folder: Path, tier: Tier, source: str, max_bytes: int
) -> tuple[Skill | None, list[SkillProblem]]:
    """The skill in `folder`, or None and every problem found (each one line of `skills check`)."""
    path = folder / SKILL_FILE
    try:
        text, size = read_text(path, max_bytes)
    except SkillFileError as exc:
        return None, [SkillProblem(path, 1, str(exc))]
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != FENCE:
        return None, [SkillProblem(path, 1, "no front matter: the file must start with a '---' line")]
    end = _closing_fence(lines)
    if end is None:
        return None, [SkillProblem(path, 1, "front matter is not closed by a '---' line")]
    header_lines = lines[1:end]
    data, problem = _load_yaml("".join(header_lines), path)
    if problem is not None:
        return None, [problem]
    problems: list[SkillProblem] = []

    def at(key: str, message: str) -> None:
        problems.append(SkillProblem(path, _key_line(header_lines, key), message))

    name = data.get("name")
    if name is None:
        at("", "front matter has no 'name'")
    elif not isinstance(name, str) or not NAME_RE.match(name):
        at("name", f"name {name!r} is invalid: use 1-64 lower-case letters, digits, '-' or '_'")
    elif name != folder.name:
        at("name", f"name {name!r} is not its folder's name {folder.name!r}")
    description = data.get("description")
    if description is None:
        at("", "front matter has no 'description'")
    elif not isinstance(description, str) or not description.strip():
        at("description", "description must be non-empty text")
    elif len(description) > MAX_DESCRIPTION_CHARS:
        at("description", f"description is {len(description)} characters, over {MAX_DESCRIPTION_CHARS}")
    bins, env = _requires(data.get("requires"), header_lines, at)
    if problems:
        return None, problems
    assert isinstance(name, str) and isinstance(description, str)
    return Skill(name, " ".join(description.split()), folder, tier, source, size, bins, env), []


def _closing_fence(lines: list[str]) -> int | None:
    """The index of the line that closes the front matter opened by line 0."""
    return next((i for i in range(1, len(lines)) if lines[i].rstrip("\r\n") in (FENCE, "...")), None)


def _load_yaml(header: str, path: Path) -> tuple[dict[str, Any], SkillProblem | None]:
    import yaml  # only when a SKILL.md changed: a turn with nothing new never loads it

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(header, Loader=loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        # The context mark is where the broken construct starts (an unclosed '['), the problem mark
        # where the parser gave up (often the end of the front matter): the first says more.
        mark = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 2  # the front matter starts at line 2
        context, problem = getattr(exc, "context", None), getattr(exc, "problem", None)
        what = "; ".join(str(part) for part in (context, problem) if part) or str(exc).splitlines()[0]
        return {}, SkillProblem(path, line, f"YAML error in front matter: {what}")
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return {}, SkillProblem(path, 2, "front matter must be a mapping of keys to values")
    return data, None


def _requires(
    value: Any, header_lines: list[str], at: Any
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if value is None:
        return (), ()
    if not isinstance(value, dict):
        at("requires", "requires must be a mapping with 'bins' and/or 'env'")
        return (), ()
    unknown = sorted(str(key) for key in value if key not in ("bins", "env"))
    if unknown:
        at("requires", f"requires has unknown key(s) {', '.join(unknown)}: use 'bins' and 'env'")
    bins = _names(value.get("bins"), BIN_RE, "requires.bins", "command names (no '/')", at)
    env = _names(value.get("env"), ENV_NAME_RE, "requires.env", "environment variable names", at)
    return bins, env


def _names(value: Any, pattern: re.Pattern[str], key: str, what: str, at: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) and pattern.match(i) for i in items):
        at(key.split(".")[-1], f"{key} must be a list of {what}")
        return ()
    return tuple(items)


def _key_line(header_lines: list[str], key: str) -> int:
    """The file line where `key:` is written in the front matter (line 1, the fence, when absent)."""
    if key:
        pattern = re.compile(rf"^\s*{re.escape(key)}\s*:")
        for index, line in enumerate(header_lines):
            if pattern.match(line):
                return index + 2
    return 1


def read_body(skill: Skill, max_bytes: int, max_chars: int) -> tuple[str, bool]:
    """The skill's Markdown body, at most `max_chars` of it, and whether it was cut."""
    text, _size = read_text(skill.path, max_bytes)  # read anew: the file may have changed since the scan
    lines = text.splitlines(keepends=True)
    end = _closing_fence(lines) if lines and lines[0].strip() == FENCE else None
    body = "".join(lines[end + 1 :] if end is not None else lines).strip("\r\n")
    if len(body) <= max_chars:
        return body, False
    return body[:max_chars], True
