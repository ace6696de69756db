"""The `cron` section of the config (config_models.Settings holds it): whether the gateway runs the jobs,
and each job's schedule and timeout.

A schedule is validated where the settings are (every load, `config set`, a hot reload), so a bad one is
refused with its key before it is ever used. croniter (55 ms to import) is loaded for that only when a
schedule differs from the defaults, which are known to be valid: a default home's commands never pay it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

DEFAULT_SCHEDULES = {
    "sweep": "*/15 * * * *",  # every 15 minutes
    "backup": "30 3 * * *",  # daily, 03:30 local time
    "indexCheck": "45 3 * * *",  # daily, after the backup
    "reflect": "0 * * * *",  # hourly look: it runs only when due (50 unreflected memories, or 24 h)
}


class _Section(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", allow_inf_nan=False
    )


class CronJob(_Section):
    schedule: str | None = Field(
        None, description="a cron expression, local time (5 fields or @daily...); null turns the job off"
    )
    timeout_seconds: float = Field(
        3600, gt=0, le=86_400, description="a run still going then is stopped, logged as failed"
    )

    @field_validator("schedule")
    @classmethod
    def _valid(cls, value: str | None) -> str | None:
        if value is None or value in DEFAULT_SCHEDULES.values():
            return value
        from openclaw_cli.scheduler.schedule import problem

        found = problem(value)
        if found is not None:
            raise ValueError(found)
        return value


class SweepJob(CronJob):
    schedule: str | None = DEFAULT_SCHEDULES["sweep"]
    timeout_seconds: float = Field(600, gt=0, le=86_400)


class BackupJob(CronJob):
    schedule: str | None = DEFAULT_SCHEDULES["backup"]


class IndexCheckJob(CronJob):
    schedule: str | None = DEFAULT_SCHEDULES["indexCheck"]


class ReflectJob(CronJob):
    schedule: str | None = DEFAULT_SCHEDULES["reflect"]


class CronJobs(_Section):
    sweep: SweepJob = Field(default_factory=SweepJob)
    backup: BackupJob = Field(default_factory=BackupJob)
    index_check: IndexCheckJob = Field(default_factory=IndexCheckJob)
    reflect: ReflectJob = Field(default_factory=ReflectJob)


class CronSettings(_Section):
    enabled: bool = Field(True, description="the gateway runs cron.jobs; false leaves them to system cron")
    jobs: CronJobs = Field(default_factory=CronJobs)
