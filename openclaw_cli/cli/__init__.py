"""Thin Typer commands: parse, call one core function, render, map errors (no work of their own here).

main.py is the `openclaw` root with its global options (global_options.py lets them follow a subcommand)
and lazy.py imports a command group only when it is used. One folder per command group, as gh has:
memory/, session/, gateway/ (and `cron`), channels/ (and `pairing`), chat/, home/ (doctor, config,
auth, security); a small group stays one module (reflect.py, skills.py, plugins.py, mcp.py, shell.py). A
group's modules register their commands on the group's app (`register(app)`) and share its helpers.py.
common.py is what every command shares (home, agent, settings, output, errors), passphrase_edge.py is the
one place a passphrase is read, progress.py draws progress bars and job_lock.py takes a scheduled job's
lock. cli/ may import every other package; nothing outside cli/ imports from here except entry.py.

May import (in openclaw_cli/): core, security, config, llm, identity, sessions, memory, skills, plugins,
agent, channels, scheduler, forget, gateway, doctor, mcp, docgen.
"""
