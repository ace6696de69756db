"""The schedule in a real gateway: a missed run at start, `cron list` and `cron run` through the gateway, a
schedule changed by hot reload, and `cron run` without a gateway (one line, exit 1)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from openclaw_cli.scheduler.state import JobRun, load_state, save_state, state_path
from tests.gateway_helpers import running_gateway, until


def test_gateway_runs_its_schedule(home: Path, cli) -> None:  # type: ignore[no-untyped-def]
    assert cli("memory", "add", "I drink green tea").returncode == 0
    (home / "openclaw.json").write_text(json.dumps({"gateway": {"configPollMs": 100}}), encoding="utf-8")
    three_days_ago = datetime.now().astimezone() - timedelta(days=3)
    save_state(state_path(home), {"sweep": JobRun("sweep", three_days_ago, "ok", 0.5)})

    with running_gateway(home, env={"OPENCLAW_CRON__ENABLED": "true"}):
        until(lambda: load_state(state_path(home))["sweep"].started > three_days_ago, timeout=60)
        swept = load_state(state_path(home))["sweep"]
        assert (swept.result, swept.trigger) == ("ok", "missed")

        listed = cli("cron", "list", "--json")
        assert listed.returncode == 0, listed.stderr
        rows = {row["job"]: row for row in listed.json()["jobs"]}
        assert listed.json()["gateway"] is not None
        assert rows["sweep"]["result"] == "ok" and rows["sweep"]["nextRun"] is not None
        assert rows["backup"]["lastRun"] is None and rows["backup"]["nextRun"] is not None

        ran = cli("cron", "run", "backup")
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout.startswith("backup: ok in ")
        assert list((home / "agents" / "main" / "memory").glob("backups/daily-*"))

        changed = cli("config", "set", "cron.jobs.sweep.schedule", "*/5 * * * *")
        assert changed.returncode == 0, changed.stderr

        def reloaded() -> bool:
            jobs = cli("cron", "list", "--json").json()["jobs"]
            return any(row["job"] == "sweep" and row["schedule"] == "*/5 * * * *" for row in jobs)

        until(reloaded, timeout=30)

    offline = cli("cron", "list", "--json").json()
    assert offline["gateway"] is None
    assert {row["job"]: row["result"] for row in offline["jobs"]}["backup"] == "ok"
    none = cli("cron", "run", "sweep")
    assert none.returncode == 1
    assert none.stderr.count("\n") == 1
    assert "no gateway is running" in none.stderr and "openclaw session sweep" in none.stderr
