"""`openclaw skills list|show|check`: the SKILL.md instruction sets an agent has (openclaw_cli/skills/)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from openclaw_cli.cli import common

app = typer.Typer(
    help="Skills: SKILL.md instruction sets in the workspace's and the home's skills/ folders.",
    no_args_is_help=True,
    epilog="Examples:\n\n  openclaw skills list\n\n  openclaw skills show weekly-report --agent work\n\n"
    "  openclaw skills check",
)
JsonOpt = Annotated[bool, typer.Option("--json", help=common.JSON_HELP)]
NameArg = Annotated[str, typer.Argument(help="The skill's name (its folder's name).")]
DESCRIPTION_WIDTH = 70  # of a description in `skills list`; --json and `show` give it whole


def _args() -> tuple[Any, str, Any, dict[str, str]]:
    st = common.state()
    return st.home, st.agent, st.agent_settings, st.env


def _plugin_dirs() -> list[Any]:
    """The skill folders the configured plugins ship (the tier after the home's)."""
    from openclaw_cli.plugins.host import load_plugins

    st = common.state()
    return load_plugins(st.settings.plugins, st.home.root).skill_dirs()


@app.command(
    "list",
    epilog="Examples:\n\n  openclaw skills list\n\n  openclaw skills list --json --agent work",
)
def list_cmd(as_json: JsonOpt = False) -> None:
    """Every skill the agent (--agent) has: name, tier (workspace, home or a plugin), available or why
    not (requires.bins, requires.env, agents.list[].skills), size and description."""
    from openclaw_cli.skills.report import list_skills

    rows = list_skills(*_args(), _plugin_dirs())
    if as_json:
        common.emit_json({"skills": rows})
        return
    if not rows:
        common.echo("no skills (add <home>/skills/NAME/SKILL.md or <workspace>/skills/NAME/SKILL.md)")
        return
    for row in rows:
        state = "available" if row["available"] else f"gated: {row['reason']}"
        description = row["description"]
        if len(description) > DESCRIPTION_WIDTH:
            description = description[: DESCRIPTION_WIDTH - 1] + "…"
        common.echo(f"{row['name']}  {row['source']}  {state}  {row['size']} B  {description}")


@app.command(
    "show",
    epilog="Examples:\n\n  openclaw skills show weekly-report\n\n  openclaw skills show weekly-report --json",
)
def show_cmd(name: NameArg, as_json: JsonOpt = False) -> None:
    """One skill: where it is, whether the agent may use it, what it requires, and its body."""
    from openclaw_cli.skills.report import show_skill

    shown = show_skill(*_args(), name, _plugin_dirs())
    if as_json:
        common.emit_json(shown)
        return
    state = "available" if shown["available"] else f"gated: {shown['reason']}"
    common.echo(f"name: {shown['name']}")
    common.echo(f"description: {shown['description']}")
    common.echo(f"tier: {shown['source']}  ({shown['path']}, {shown['size']} B)")
    common.echo(f"state: {state}")
    requires = shown["requires"]
    common.echo(f"requires: bins {common.human(requires['bins'])}; env {common.human(requires['env'])}")
    if shown["shadows"]:
        common.echo(f"overrides the same name in: {common.human(shown['shadows'])}")
    common.echo("")
    common.echo(shown["body"])
    if shown["truncated"]:
        common.warn("the body was cut at skills.maxReadChars")


@app.command(
    "check",
    epilog="Examples:\n\n  openclaw skills check\n\n  openclaw skills check --quiet --agent work",
)
def check_cmd(as_json: JsonOpt = False, quiet: common.QuietOpt = False) -> None:
    """Validate every SKILL.md the agent sees (front matter, name, description, requires): each problem
    on one line as `file:line: message`. Exit status 1 when there is any."""
    from openclaw_cli.skills.report import check_skills

    problems = check_skills(*_args(), _plugin_dirs())
    if as_json:
        common.emit_json({"ok": not problems, "problems": problems})
    else:
        for line in problems:
            common.echo(line)
        if not problems and not quiet:
            common.echo("every SKILL.md is valid")
    if problems:
        raise typer.Exit(1)
