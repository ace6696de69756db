"""What a turn and the CLI ask of one agent's skills: a view of them now, the prompt block, a body.

`AgentSkills` lives as long as the agent's services (its catalog caches the parsed files); `view()` is
called once per turn and scans again, which is how edits are picked up with no restart. The environment
(for `requires.env` and PATH) is the one the CLI or the gateway was started with, given here.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import NotFound, OpenclawError
from openclaw_cli.skills.catalog import Root, SkillCatalog
from openclaw_cli.skills.model import Entry, Skill, SkillProblem
from openclaw_cli.skills.parse import NAME_RE, SkillFileError, read_body
from openclaw_cli.skills.prompt import Block, build_block
from openclaw_cli.skills.resolve import resolve
from openclaw_cli.skills.usage import USAGE_FILE, read_usage, record_use

if TYPE_CHECKING:
    from openclaw_cli.config.models import Settings, SkillsSettings
    from openclaw_cli.core.paths import Home

SKILLS_DIR = "skills"
# (plugin id, folder of skill folders): what plugins ship, after the workspace and the home.
PluginDirs = Sequence[tuple[str, Path]]
REFUSAL_NAMES = 20  # skills named in the reply to a bad /skill; a chat message, not a catalogue


class SkillUnavailable(OpenclawError):
    """A skill that exists but that this agent may not use now (gated, or not in its list)."""


def skill_roots(home: Home, agent_id: str, settings: Settings, plugin_dirs: PluginDirs = ()) -> list[Root]:
    """The tiers' folders, first wins: the agent's workspace, the home (every agent's), the plugins'."""
    from openclaw_cli.memory.workspace.files import workspace_dir

    roots = [
        Root("workspace", "workspace", workspace_dir(home, agent_id, settings.memory) / SKILLS_DIR),
        Root("home", "home", home.root / SKILLS_DIR),
    ]
    roots.extend(Root("plugin", plugin_id, Path(folder)) for plugin_id, folder in plugin_dirs)
    return roots


def allowed_skills(settings: Settings, agent_id: str) -> list[str] | None:
    from openclaw_cli.identity.agent_config import agent_entry

    entry = agent_entry(settings, agent_id)
    return None if entry is None else entry.skills


@dataclass(frozen=True)
class SkillView:
    """An agent's skills at one moment: every name's winning skill (available or not), and problems."""

    entries: tuple[Entry, ...]
    problems: tuple[SkillProblem, ...]
    settings: SkillsSettings
    usage_path: Path

    @property
    def available(self) -> list[Skill]:
        return [entry.skill for entry in self.entries if entry.available]

    def entry(self, name: str) -> Entry:
        for entry in self.entries:
            if entry.skill.name == name:
                return entry
        raise NotFound(f"no skill named {name!r}", hint="see `openclaw skills list`")

    def usable(self, name: str) -> Skill:
        """The skill the agent may use by that name; NotFound or SkillUnavailable saying why not."""
        if not NAME_RE.match(name):
            raise NotFound(f"no skill named {name[:80]!r}", hint="see `openclaw skills list`")
        entry = self.entry(name)
        if not entry.available:
            raise SkillUnavailable(f"skill {name!r} is not available: {entry.reason}")
        return entry.skill

    def block(self) -> Block:
        """The system prompt's list of available skills, within skills.maxPromptChars."""
        skills = self.available
        if not skills:
            return Block("", (), 0, False)
        return build_block(skills, read_usage(self.usage_path), self.settings.max_prompt_chars)

    def body(self, skill: Skill) -> tuple[str, bool]:
        try:
            return read_body(skill, self.settings.max_file_bytes, self.settings.max_read_chars)
        except SkillFileError as exc:
            raise SkillUnavailable(f"skill {skill.name!r} cannot be read: {exc}") from exc

    def read(self, name: str, now: float | None = None) -> dict[str, Any]:
        """The skill_read tool's answer: the body, with the folder its relative paths start from."""
        skill = self.usable(name)
        body, cut = self.body(skill)
        # A home we cannot write only loses the order in which a full budget drops skills.
        with contextlib.suppress(OSError):
            record_use(self.usage_path, skill.name, time.time() if now is None else now)
        answer: dict[str, Any] = {"name": skill.name, "folder": str(skill.folder), "body": body}
        if cut:
            answer["truncated"] = f"the body was cut at skills.maxReadChars ({self.settings.max_read_chars})"
        return answer

    def invoke(self, name: str, now: float | None = None) -> str:
        """The system prompt section of a skill the user invoked with `/skill NAME`."""
        answer = self.read(name, now)
        cut = f"\n\n({answer['truncated']})" if "truncated" in answer else ""
        return (
            f"## Skill {answer['name']} (invoked by the user with /skill: follow it for this message)\n\n"
            f"Its folder is {answer['folder']}; relative paths in it start there.\n\n{answer['body']}{cut}"
        )


    def system_section(self, invoked: str | None, now: float) -> str:
        """What the system prompt gets: the list of available skills, and the body of the one the user
        invoked (loop.py checked it with `refusal` first); "" when the agent has no skill."""
        parts = [self.block().text]
        if invoked:
            parts.append(self.invoke(invoked, now))
        text = "\n\n".join(part for part in parts if part)
        return f"\n\n{text}" if text else ""

    def refusal(self, name: str) -> str | None:
        """The reply to `/skill NAME` when NAME is no skill the agent may use now (None: it is one)."""
        available = [skill.name for skill in self.available]
        names = ", ".join(available[:REFUSAL_NAMES]) or "none"
        if len(available) > REFUSAL_NAMES:
            names += f" and {len(available) - REFUSAL_NAMES} more (openclaw skills list)"
        if not name:
            return f"Usage: /skill NAME [text]. Available skills: {names}."
        try:
            self.usable(name)
        except OpenclawError as exc:
            return f"{exc.message[:1].upper()}{exc.message[1:]}. Available skills: {names}."
        return None


@dataclass
class AgentSkills:
    """One agent's skills in a process: the roots, the environment, and the cache of parsed files."""

    home: Home
    agent_id: str
    env: Mapping[str, str]
    plugin_dirs: PluginDirs = ()
    catalog: SkillCatalog | None = None

    def view(self, settings: Settings) -> SkillView:
        if self.catalog is None:
            self.catalog = SkillCatalog()
        roots = skill_roots(self.home, self.agent_id, settings, self.plugin_dirs)
        found = self.catalog.scan(roots, settings.skills.max_file_bytes)
        entries = resolve(found.skills, self.env, allowed_skills(settings, self.agent_id))
        usage = self.home.agent_dir(self.agent_id) / USAGE_FILE
        return SkillView(tuple(entries), found.problems, settings.skills, usage)


def check_problems(view: SkillView, settings: Settings, agent_id: str, config_file: Path) -> list[str]:
    """`skills check`: every SKILL.md problem, and names in the agent's list that no skill has."""
    lines = [problem.text() for problem in view.problems]
    names = {entry.skill.name for entry in view.entries}
    for name in allowed_skills(settings, agent_id) or []:
        if name not in names:
            lines.append(
                f"{config_file}: agents.list[{agent_id}].skills names {name!r}, which no SKILL.md defines"
            )
    return lines
