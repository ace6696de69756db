"""`openclaw doctor`: check the home, the config, sessions and memory; optionally repair."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from openclaw_cli.cli import common

if TYPE_CHECKING:
    from openclaw_cli.core.findings import Finding

EPILOG = (
    "Examples:\n\n  openclaw doctor\n\n  openclaw doctor --fix\n\n"
    "  openclaw --agent work doctor --json | jq '.findings[] | select(.severity != \"ok\")'\n\n"
    "  openclaw doctor --json | jq '.persons[] | {agent, persons}'"
)
_STYLE = {"ok": "green", "warning": "yellow", "error": "red"}


FixOpt = Annotated[bool, typer.Option("--fix", help="Repair what can be repaired (e.g. file permissions).")]
JsonOpt = Annotated[bool, typer.Option("--json", help=common.JSON_HELP)]


def doctor_cmd(fix: FixOpt = False, as_json: JsonOpt = False) -> None:
    """Check permissions, openclaw.json, sessions and memory; exit 1 if an error remains.

    Warnings do not change the exit status. With --fix, repairs are made and reported as fixed.
    Every memory store under the home (each agent's and the shared one) is listed with the persons whose
    memories it holds (`persons` in --json); memories a conversation wrote under the user `default` are a
    warning with the `openclaw memory reassign` command that gives them to their person (nothing is moved).
    """
    from openclaw_cli.doctor.checks import has_errors, run_doctor

    st = common.state()
    report = run_doctor(st.home, st.agent, st.env, fix)
    findings = report.findings
    failed = has_errors(findings)
    if as_json:
        common.emit_json(report.to_dict())
    else:
        _render(findings, failed, fix)
    if failed:
        # SystemExit rather than typer.Exit: with standalone_mode=False click turns typer.Exit into a
        # return value, which cli.main.run() does not pass on as the exit status.
        raise SystemExit(1)


def _render(findings: list[Finding], failed: bool, fix: bool) -> None:
    from rich.console import Console
    from rich.markup import escape

    console = Console(highlight=False, soft_wrap=True)
    for finding in findings:
        label = "fixed" if finding.fixed else finding.severity
        style = "green" if finding.fixed else _STYLE[finding.severity]
        # Say where, unless the message already does.
        shown = finding.path and finding.severity != "ok" and finding.path not in finding.message
        where = f" {escape(finding.path)}:" if shown and finding.path else ""
        console.print(f"[{style}]{label:<7}[/] {escape(finding.check)}{where} {escape(finding.message)}")
        if finding.hint and not finding.fixed:
            console.print(f"        [dim]fix:[/] {escape(finding.hint)}")
    console.print(_summary(findings, failed, fix))


def _summary(findings: list[Finding], failed: bool, fix: bool) -> str:
    errors = sum(1 for f in findings if f.severity == "error" and not f.fixed)
    warnings = sum(1 for f in findings if f.severity == "warning" and not f.fixed)
    fixed = sum(1 for f in findings if f.fixed)
    counts = f"{errors} error(s), {warnings} warning(s), {fixed} fixed"
    if not failed:
        return f"[green]healthy[/]: {counts}"
    advice = "" if fix else "; run `openclaw doctor --fix` to repair what can be repaired"
    return f"[red]problems found[/]: {counts}{advice}"
