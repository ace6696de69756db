"""The Scheduler the gateway runs: each job at its cron.jobs times, one job at a time, outside the lanes.

- A job's next time follows its last run (cron/state.json): when the gateway was down over one or more of
  its times, it is due at start and runs once (not once per missed time), then follows its schedule.
  A job that never ran waits for its first time after the gateway started.
- A run that fails (an exit status other than 0, a command that cannot start) or passes its timeout is
  logged, kept as the job's last result, and tried again at its next time; nothing of it reaches the
  gateway's other work.
- `run_now` (`openclaw cron run JOB`) waits for the job running, if any, then runs the job at once.

The clock and the runner are given, so the logic is tested with a clock a test moves and without
processes; the gateway gives the wall clock and runner.run_command.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.scheduler.jobs import JOBS, Job, agents_of, job_named
from openclaw_cli.scheduler.runner import Outcome, Runner, run_command
from openclaw_cli.scheduler.schedule import next_after
from openclaw_cli.scheduler.state import JobRun, load_state, save_state, state_path

if TYPE_CHECKING:
    from openclaw_cli.core.paths import Home
    from openclaw_cli.scheduler.settings import CronJob, CronSettings

log = logging.getLogger("openclaw.gateway")
MAX_SLEEP = 60.0  # the loop looks at the clock at least this often (the wall clock may jump)
Clock = Callable[[], datetime]
Command = Callable[[Job, "str | None"], list[str]]


def local_now() -> datetime:
    return datetime.now().astimezone()


def job_settings(cron: CronSettings, name: str) -> CronJob:
    by_name = {"sweep": "sweep", "backup": "backup", "indexCheck": "index_check", "reflect": "reflect"}
    value: CronJob = getattr(cron.jobs, by_name[name])
    return value


def cli_command(home: Home) -> Command:
    """The job's CLI command for this home, run by the gateway's own Python."""

    def command(job: Job, agent: str | None) -> list[str]:
        agent_args = ["--agent", agent] if agent else []
        return [sys.executable, "-m", "openclaw_cli", "--home", str(home.root), *agent_args, *job.args]

    return command


@dataclass
class Scheduler:
    home: Home
    cron: CronSettings
    env: Mapping[str, str]
    clock: Clock = local_now
    runner: Runner = run_command
    command: Command | None = None
    started: datetime = field(init=False)  # the clock at construction: a job never run waits from it
    state_file: Path | None = None
    runs: dict[str, JobRun] = field(default_factory=dict)
    running: str | None = None
    _next: dict[str, datetime] = field(default_factory=dict)
    _one: asyncio.Lock | None = None
    _wake: asyncio.Event | None = None

    def __post_init__(self) -> None:
        self.started = self.clock()
        self.state_file = self.state_file or state_path(self.home.root)
        self.runs = load_state(self.state_file)
        self.command = self.command or cli_command(self.home)
        self._plan()

    # ---------------------------------------------------------------- planning

    def _plan(self) -> None:
        """Each enabled job's next time: after its last run, or (never run) after the start."""
        self._next = {}
        for name in JOBS:
            schedule = job_settings(self.cron, name).schedule
            if schedule is None:
                continue
            last = self.runs.get(name)
            self._next[name] = next_after(schedule, last.started if last else self.started)

    def update(self, cron: CronSettings) -> None:
        """New settings (a hot reload): the times are planned again from each job's last run."""
        self.cron = cron
        self._plan()
        if self._wake is not None:
            self._wake.set()

    def due(self, now: datetime) -> list[str]:
        """The jobs whose time has come, the longest waiting first."""
        if not self.cron.enabled:
            return []
        return sorted((n for n, at in self._next.items() if at <= now), key=lambda n: self._next[n])

    def next_run(self, name: str) -> datetime | None:
        return self._next.get(name) if self.cron.enabled else None

    # ---------------------------------------------------------------- running

    def _lock(self) -> asyncio.Lock:
        if self._one is None:
            self._one = asyncio.Lock()
        return self._one

    async def tick(self) -> list[JobRun]:
        """Run every due job, one after the other."""
        done = []
        for name in self.due(self.clock()):
            last = self.runs.get(name)
            missed = self._next[name] < self.started and last is not None
            done.append(await self.run_job(name, trigger="missed" if missed else "schedule"))
        return done

    async def run_now(self, name: str) -> JobRun:
        return await self.run_job(job_named(name).name, trigger="manual")

    async def run_job(self, name: str, *, trigger: str) -> JobRun:
        async with self._lock():
            self.running = name
            try:
                run = await self._run(JOBS[name], trigger)
            finally:
                self.running = None
            self.runs[name] = run
            schedule = job_settings(self.cron, name).schedule
            if schedule is not None:  # the next time after now: missed times are not run one by one
                self._next[name] = next_after(schedule, max(self.clock(), run.started))
            await asyncio.to_thread(self._save)
        level = logging.INFO if run.result == "ok" else logging.ERROR
        log.log(
            level,
            "cron job %s (%s): %s in %.1f s%s",
            name,
            trigger,
            run.result,
            run.duration_seconds,
            f": {run.detail}" if run.detail else "",
        )
        return run

    def _save(self) -> None:
        assert self.state_file is not None
        try:
            save_state(self.state_file, self.runs)
        except OSError as exc:  # a full disk must not stop the schedule: the run is still in memory
            log.error("cannot write %s (%s)", self.state_file, exc.strerror)

    async def _run(self, job: Job, trigger: str) -> JobRun:
        started, t0 = self.clock(), time.monotonic()
        timeout = job_settings(self.cron, job.name).timeout_seconds
        targets: list[str | None] = list(agents_of(self.home)) if job.per_agent else [None]
        problems: list[str] = []
        result = "ok"
        assert self.command is not None
        for agent in targets:
            left = timeout - (time.monotonic() - t0)
            if left <= 0:
                result = "timeout"
                break
            try:
                outcome = await self.runner(self.command(job, agent), self.env, left)
            except OSError as exc:  # the interpreter cannot start (gone, no memory): a failed run
                outcome = Outcome(127, f"cannot start the job's command: {exc.strerror or exc}")
            where = f"agent {agent}: " if agent else ""
            if outcome.timed_out:
                result = "timeout"
                problems.append(f"{where}stopped after {timeout:g} s (cron.jobs.{job.name}.timeoutSeconds)")
                break
            if outcome.code != 0:
                result = "failed"
                last_line = outcome.output.splitlines()[-1] if outcome.output else "no output"
                problems.append(f"{where}exit {outcome.code}: {last_line}")
        return JobRun(
            job=job.name,
            started=started,
            result=result,  # type: ignore[arg-type]  # one of the three
            duration_seconds=time.monotonic() - t0,
            detail="; ".join(problems)[:500] or None,
            trigger=trigger,
        )

    async def run_forever(self) -> None:
        """The gateway's task: run what is due, sleep until the next time (or a change), again."""
        self._wake = asyncio.Event()
        while True:
            try:
                await self.tick()
            except Exception:  # noqa: BLE001 - a bug in one round must not end the schedule
                log.exception("the scheduler's round failed; trying again at the next time")
            waits = [(at - self.clock()).total_seconds() for at in self._next.values()]
            wait = min([MAX_SLEEP, *waits]) if self.cron.enabled else MAX_SLEEP
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), max(wait, 0.01))
            self._wake.clear()

    # ---------------------------------------------------------------- reporting

    def rows(self) -> list[dict[str, Any]]:
        return job_rows(self.cron, self.runs, self.next_run, self.running)


def job_rows(
    cron: CronSettings,
    runs: dict[str, JobRun],
    next_run: Callable[[str], datetime | None],
    running: str | None = None,
) -> list[dict[str, Any]]:
    """`cron list`: each job with its schedule, last run, result, duration and next run."""
    rows = []
    for name, job in JOBS.items():
        settings = job_settings(cron, name)
        last = runs.get(name)
        upcoming = next_run(name)
        rows.append(
            {
                "job": name,
                "schedule": settings.schedule,
                "timeoutSeconds": settings.timeout_seconds,
                "about": job.about,
                "command": " ".join(job.command("AGENT" if job.per_agent else None)),
                "lastRun": last.started.isoformat() if last else None,
                "result": last.result if last else None,
                "durationSeconds": round(last.duration_seconds, 3) if last else None,
                "detail": last.detail if last else None,
                "nextRun": upcoming.isoformat() if upcoming else None,
                "running": running == name,
            }
        )
    return rows


def offline_rows(home: Home, cron: CronSettings) -> list[dict[str, Any]]:
    """`cron list` without a gateway: the last runs it recorded; no next run, as nothing will run them."""
    return job_rows(cron, load_state(state_path(home.root)), lambda name: None)
