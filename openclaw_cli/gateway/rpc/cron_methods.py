"""The gateway's scheduler (scheduler/service.py) and its two methods: `cron.list` (each job with its last
run and next time) and `cron.run` (one job now; the answer comes when it is done)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from openclaw_cli.gateway.rpc import protocol as p

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Settings
    from openclaw_cli.core.paths import Home
    from openclaw_cli.gateway.rpc.methods import Methods
    from openclaw_cli.scheduler.service import Scheduler


def start_scheduler(home: Home, settings: Settings, env: Mapping[str, str], methods: Methods) -> Scheduler:
    from openclaw_cli.scheduler.service import Scheduler

    scheduler = Scheduler(home, settings.cron, env)

    async def cron_list(params: dict[str, Any]) -> Any:
        return {"enabled": scheduler.cron.enabled, "jobs": scheduler.rows()}

    async def cron_run(params: dict[str, Any]) -> Any:
        name = p.param_str(params, "job", max_length=64)
        assert name is not None  # required
        return (await scheduler.run_now(name)).to_dict()

    methods.register("cron.list", cron_list)
    methods.register("cron.run", cron_run)
    return scheduler
