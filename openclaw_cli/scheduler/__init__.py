"""The gateway's own schedule (seed 003 §2, §7: Cron in the infrastructure layer): the upkeep jobs a user
would otherwise give to the system's cron (session sweep, the daily memory backup, the index check,
reflection when due) run inside the gateway, outside the chat lanes, one at a time.

Modules: jobs.py (what each job runs, its schedule's defaults live in config_models.py), schedule.py
(cron expressions, through croniter), state.py (each job's last run, kept in cron/state.json), runner.py
(one job's command as a child process with a deadline), service.py (the Scheduler the gateway runs),
lock.py (the lock a job's CLI command takes, so system cron and the gateway never both run a job).

Each job runs as the very CLI command system cron would call, in a child process: the two runners then
share one lock and one behaviour, and a job that hangs can be stopped at its timeout (a thread cannot be).
Imports nothing heavy at module level; croniter loads with the schedule.

Never imports gateway/: the gateway runs the scheduler.

May import (in openclaw_cli/): core.
"""
