"""Thin Typer commands: parse, call one core function, render, map errors (no work of their own here).

main.py is the `openclaw` root with its global options (global_options.py lets them follow a subcommand)
and lazy.py imports a command group only when it is used. Each group is a module (session.py, memory.py,
config_cmd.py, gateway.py, chat.py, doctor.py, reflect.py, shell.py); a group too large for one module
registers its siblings' commands (memory_*.py, session_*.py, each with `register(app)`), which share a
public memory_common.py or session_common.py and never import each other. common.py is what every
command shares (home, agent, settings, output, errors); chat_ui.py and progress.py
render. May import every other package; nothing outside cli/ imports from here except entry.py.
"""
