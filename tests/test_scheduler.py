"""The gateway's schedule (scheduler/): due times from cron expressions and the last runs, missed runs once
at start, failures kept and retried, one job at a time, a hanging job stopped at its timeout, the lock the
CLI commands share, and bad cron expressions refused with their key.

Logic is tested in-process with a clock the test moves and a recording runner; the timeout with real child
processes; the lock with the real CLI; the gateway end to end in test_scheduler_gateway.py.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from openclaw_cli.config.loading import Settings, set_key, validate_settings
from openclaw_cli.core.errors import ConfigError, InvalidInput
from openclaw_cli.core.paths import Home
from openclaw_cli.scheduler import runner as runner_module
from openclaw_cli.scheduler.jobs import Job, agents_of, job_named
from openclaw_cli.scheduler.lock import WHOLE_HOME, try_job_lock
from openclaw_cli.scheduler.runner import Outcome, run_command
from openclaw_cli.scheduler.service import Scheduler
from openclaw_cli.scheduler.settings import CronSettings
from openclaw_cli.scheduler.state import JobRun, load_state, save_state, state_path

ZONE = timezone(timedelta(hours=2))
START = datetime(2026, 3, 10, 10, 7, tzinfo=ZONE)


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


class Recorder:
    """A runner that records each command and answers from `outcomes` (default: exit 0)."""

    def __init__(self, *outcomes: Outcome) -> None:
        self.calls: list[list[str]] = []
        self.outcomes = list(outcomes)

    async def __call__(self, argv: Sequence[str], env: Mapping[str, str], timeout: float) -> Outcome:
        self.calls.append(list(argv))
        return self.outcomes.pop(0) if self.outcomes else Outcome(0, "")


def _home(tmp_path: Path, agents: tuple[str, ...] = ("main",)) -> Home:
    home = Home(tmp_path / "home")
    for agent in agents:
        home.ensure(home.agent_dir(agent))
    return home


def _cron(**jobs: dict[str, object]) -> CronSettings:
    return validate_settings({"cron": {"jobs": jobs}}, {}, Path("openclaw.json")).cron


def _scheduler(home: Home, clock: Clock, runner: Recorder, cron: CronSettings | None = None) -> Scheduler:
    return Scheduler(
        home,
        cron or CronSettings(),
        {},
        clock=clock,
        runner=runner,
        command=lambda job, agent: [job.name, agent or "-"],
    )


def test_defaults_follow_the_issue() -> None:
    jobs = Settings().cron.jobs
    assert Settings().cron.enabled is True
    assert jobs.sweep.schedule == "*/15 * * * *"
    assert jobs.backup.schedule == "30 3 * * *"  # daily
    assert jobs.index_check.schedule == "45 3 * * *"  # daily
    assert jobs.reflect.schedule == "0 * * * *"  # an hourly look; `reflect --if-due` runs when due
    assert job_named("reflect").args == ("reflect", "--if-due", "--quiet")


def test_a_job_never_run_waits_for_its_first_time(tmp_path: Path) -> None:
    clock, runner = Clock(START), Recorder()
    scheduler = _scheduler(_home(tmp_path), clock, runner)
    assert scheduler.due(clock()) == []
    assert scheduler.next_run("sweep") == START.replace(minute=15)
    clock.now = START.replace(minute=15)
    done = asyncio.run(scheduler.tick())
    assert [(run.job, run.result, run.trigger) for run in done] == [("sweep", "ok", "schedule")]
    assert runner.calls == [["sweep", "main"]]
    assert scheduler.next_run("sweep") == START.replace(minute=30)
    assert load_state(state_path(scheduler.home.root))["sweep"].started == START.replace(minute=15)


def test_missed_runs_run_once_at_start(tmp_path: Path) -> None:
    home = _home(tmp_path)
    long_ago = START - timedelta(days=3)  # the gateway was down: hundreds of sweep times, 3 backups
    save_state(
        state_path(home.root),
        {name: JobRun(name, long_ago, "ok", 1.0) for name in ("sweep", "backup")},
    )
    clock, runner = Clock(START), Recorder()
    scheduler = _scheduler(home, clock, runner)
    done = asyncio.run(scheduler.tick())
    assert sorted((run.job, run.trigger) for run in done) == [("backup", "missed"), ("sweep", "missed")]
    assert sorted(runner.calls) == [["backup", "-"], ["sweep", "main"]]
    assert asyncio.run(scheduler.tick()) == []  # once, not once per missed time
    assert scheduler.next_run("sweep") == START.replace(minute=15)
    assert scheduler.next_run("backup") == (START + timedelta(days=1)).replace(hour=3, minute=30)


def test_failure_is_kept_and_retried_at_its_next_time(tmp_path: Path) -> None:
    clock = Clock(START.replace(minute=15))
    runner = Recorder(Outcome(1, "openclaw: error: the disk is full"))
    scheduler = _scheduler(_home(tmp_path, ("main", "work")), clock, runner)
    scheduler.started = START  # the gateway started at 10:07
    scheduler.update(scheduler.cron)
    [run] = asyncio.run(scheduler.tick())
    assert run.result == "failed"
    assert run.detail == "agent main: exit 1: openclaw: error: the disk is full"
    assert runner.calls == [["sweep", "main"], ["sweep", "work"]]  # one agent's failure stops no other
    assert load_state(state_path(scheduler.home.root))["sweep"].result == "failed"
    clock.now = START.replace(minute=30)
    [again] = asyncio.run(scheduler.tick())
    assert again.result == "ok" and again.detail is None


def test_a_command_that_cannot_start_is_a_failed_run(tmp_path: Path) -> None:
    clock = Clock(START)

    async def broken(argv: Sequence[str], env: Mapping[str, str], timeout: float) -> Outcome:
        raise FileNotFoundError(2, "No such file or directory")

    scheduler = Scheduler(_home(tmp_path), CronSettings(), {}, clock=clock, runner=broken)
    run = asyncio.run(scheduler.run_now("sweep"))
    assert run.result == "failed" and "cannot start" in (run.detail or "")
    assert run.trigger == "manual"


def test_jobs_run_one_at_a_time(tmp_path: Path) -> None:
    clock = Clock(START)
    active, most = 0, 0

    async def slow(argv: Sequence[str], env: Mapping[str, str], timeout: float) -> Outcome:
        nonlocal active, most
        active += 1
        most = max(most, active)
        await asyncio.sleep(0.01)
        active -= 1
        return Outcome(0, "")

    scheduler = Scheduler(_home(tmp_path), CronSettings(), {}, clock=clock, runner=slow)

    async def both() -> list[JobRun]:
        return list(await asyncio.gather(*(scheduler.run_now(n) for n in ("sweep", "backup", "reflect"))))

    assert [run.result for run in asyncio.run(both())] == ["ok", "ok", "ok"]
    assert most == 1


def test_disabled_jobs_and_a_disabled_schedule_are_never_due(tmp_path: Path) -> None:
    clock, runner = Clock(START), Recorder()
    scheduler = _scheduler(_home(tmp_path), clock, runner, _cron(sweep={"schedule": None}))
    clock.now = START + timedelta(days=2)
    assert "sweep" not in scheduler.due(clock()) and scheduler.next_run("sweep") is None
    assert scheduler.due(clock())  # the others are
    scheduler.update(CronSettings(enabled=False))
    assert scheduler.due(clock()) == []
    assert scheduler.rows()[0]["nextRun"] is None


def test_unknown_job_name(tmp_path: Path) -> None:
    assert job_named("index-check").name == "indexCheck"
    with pytest.raises(InvalidInput, match="no job named 'nightly'"):
        job_named("nightly")


def test_agents_are_the_home_s_agent_folders(tmp_path: Path) -> None:
    home = _home(tmp_path, ("main", "work"))
    home.ensure(home.root / "agents" / "_shared")
    (home.root / "agents" / "bad name").mkdir()
    assert agents_of(home) == ["main", "work"]


def test_damaged_state_counts_as_no_history(tmp_path: Path) -> None:
    home = _home(tmp_path)
    path = state_path(home.root)
    path.parent.mkdir(parents=True)
    path.write_text('{"jobs": {"sweep": {"lastRun": "yesterday"}}', encoding="utf-8")
    clock, runner = Clock(START), Recorder()
    scheduler = _scheduler(home, clock, runner)
    assert scheduler.due(clock()) == []  # nothing runs all at once on a file it cannot read


@pytest.mark.parametrize(
    ("schedule", "problem"),
    [
        ("61 * * * *", "not a valid cron expression"),
        ("* * * *", "has 4 fields, not 5"),
        ("0 0 * * * *", "has 6 fields, not 5"),
        ("@sometimes", "unknown nickname"),
        ("every day", "has 2 fields"),
    ],
)
def test_bad_cron_expression_is_refused_with_its_key(tmp_path: Path, schedule: str, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _cron(indexCheck={"schedule": schedule})
    assert "key 'cron.jobs.indexCheck.schedule'" in caught.value.message
    assert problem in caught.value.message
    config = tmp_path / "openclaw.json"
    config.write_text("{}", encoding="utf-8")
    with pytest.raises(ConfigError, match=problem):
        set_key(config, "cron.jobs.sweep.schedule", schedule, {})
    assert config.read_text(encoding="utf-8") == "{}"


def test_cron_nicknames_are_schedules() -> None:
    assert _cron(backup={"schedule": "@daily"}).jobs.backup.schedule == "@daily"


# --- real child processes: the timeout --------------------------------------------------------------

HANG = """
import os, signal, sys, time
if sys.argv[2] == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
open(sys.argv[1], "w").write(str(os.getpid()))
time.sleep(120)
"""


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # a zombie not yet reaped by its parent still answers; asyncio reaps it in wait()
    return Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"


@pytest.mark.parametrize("kind", ["polite", "stubborn"])
def test_a_hanging_job_is_stopped_at_its_timeout(
    tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner_module, "GRACE_SECONDS", 0.3)  # SIGKILL for one that ignores SIGTERM
    home = _home(tmp_path)
    pid_file = tmp_path / "pid"

    def command(job: Job, agent: str | None) -> list[str]:
        if job.name == "sweep":
            return [sys.executable, "-c", HANG, str(pid_file), kind]
        return [sys.executable, "-c", "print('fine')"]

    cron = _cron(sweep={"timeoutSeconds": 1})
    scheduler = Scheduler(home, cron, dict(os.environ), clock=Clock(START), command=command)

    async def scenario() -> tuple[JobRun, JobRun]:
        hung = await scheduler.run_now("sweep")
        after = await scheduler.run_now("backup")  # the schedule goes on
        return hung, after

    hung, after = asyncio.run(scenario())
    assert hung.result == "timeout"
    assert "stopped after 1 s (cron.jobs.sweep.timeoutSeconds)" in (hung.detail or "")
    assert _gone(int(pid_file.read_text()))
    assert after.result == "ok"
    assert load_state(state_path(home.root))["sweep"].result == "timeout"


def test_run_command_reports_exit_status_and_output(tmp_path: Path) -> None:
    code = "import sys; print('openclaw: error: no space left'); sys.exit(3)"
    outcome = asyncio.run(run_command([sys.executable, "-c", code], dict(os.environ), 30))
    assert outcome.code == 3 and outcome.output == "openclaw: error: no space left"


# --- the lock the CLI commands share ---------------------------------------------------------------


def test_job_lock_is_exclusive_and_released(tmp_path: Path) -> None:
    home = _home(tmp_path)
    first = try_job_lock(home, "sweep", "main")
    assert first is not None
    assert try_job_lock(home, "sweep", "main") is None
    assert try_job_lock(home, "sweep", "work") is not None  # another agent's sweep is another job
    first.release()
    assert try_job_lock(home, "sweep", "main") is not None


def test_cli_job_skips_while_another_runner_holds_it(home: Path, cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("memory", "add", "I drink green tea").returncode == 0
    held = [try_job_lock(Home(home), "sweep", "main"), try_job_lock(Home(home), "backup", WHOLE_HOME)]
    assert all(held)
    swept = cli("session", "sweep")
    assert swept.returncode == 0 and swept.stdout == ""
    assert "session sweep is running already" in swept.stderr
    quiet = cli("session", "sweep", "--quiet")
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")
    backup = cli("memory", "backup", "--daily")
    assert backup.returncode == 0 and "memory backup --daily is running already" in backup.stderr
    assert not list((home / "agents" / "main" / "memory").glob("backups/daily-*"))
    for lock in held:
        assert lock is not None
        lock.release()
    assert cli("memory", "backup", "--daily").stdout.strip() == "1 daily backup(s) written"
    assert len(list((home / "agents" / "main" / "memory").glob("backups/daily-*"))) == 1
