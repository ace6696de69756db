"""The scheduled jobs: what each runs (the CLI command system cron would call) and for which agents.

Names are the keys of `cron.jobs` in the config. A per-agent job runs its command once for each agent
that has a directory under the home; the daily backup covers every database of the home in one run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from openclaw_cli.core.errors import InvalidInput

if TYPE_CHECKING:
    from openclaw_cli.core.paths import Home


@dataclass(frozen=True)
class Job:
    name: str
    args: tuple[str, ...]  # after `openclaw --home H [--agent A]`
    per_agent: bool
    about: str

    def command(self, agent: str | None) -> list[str]:
        """The command line as a user would type it for system cron (without --home)."""
        return ["openclaw", *(["--agent", agent] if agent else []), *self.args]


JOBS: dict[str, Job] = {
    job.name: job
    for job in (
        Job(
            "sweep", ("session", "sweep", "--quiet"), True, "daily/idle resets, dormancy, media past its TTL"
        ),
        Job(
            "backup",
            ("memory", "backup", "--daily", "--quiet"),
            False,
            "today's copy of every memory database",
        ),
        Job("indexCheck", ("memory", "index", "--check", "--quiet"), True, "verify the search indexes"),
        Job("reflect", ("reflect", "--if-due", "--quiet"), True, "reflection when due (50 memories or 24 h)"),
    )
}


def job_named(name: str) -> Job:
    """The job called `name` (`index-check` and `index_check` spell indexCheck too)."""
    wanted = name.replace("-", "").replace("_", "").lower()
    for job in JOBS.values():
        if job.name.lower() == wanted:
            return job
    raise InvalidInput(f"no job named {name!r}", hint=f"the jobs are: {', '.join(JOBS)}")


def agents_of(home: Home) -> list[str]:
    """The agents with a directory under the home (never `_shared`, which is not an agent)."""
    from openclaw_cli.core.paths import validate_name

    folder = home.root / "agents"
    try:
        names = sorted(entry.name for entry in folder.iterdir() if entry.is_dir())
    except OSError:
        return []
    found = []
    for name in names:
        if name.startswith("_"):
            continue
        try:
            found.append(validate_name(name, "agent id"))
        except InvalidInput:  # a stray folder is not an agent; never a path built from it
            continue
    return found
