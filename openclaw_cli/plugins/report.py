"""What `openclaw plugins list|info` and `openclaw doctor` say about plugins.

The state is the running gateway's when one answers (`plugins.status`: with the errors its hooks counted
since it started), else what loading the plugins in this process gives (import, config and registration
errors). Loading runs the plugins' registration hooks, as any process that uses them does.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import NotFound
from openclaw_cli.core.findings import Finding

if TYPE_CHECKING:
    from openclaw_cli.config.models import Settings

CHECK = "plugins"


def loaded_status(settings: Settings, home_root: Path) -> dict[str, Any]:
    """The plugins as this process loads them: {"plugins": [...], "problems": [...]}."""
    from openclaw_cli.plugins.host import load_plugins

    return load_plugins(settings.plugins, home_root).status()


def find(status: dict[str, Any], plugin_id: str) -> dict[str, Any]:
    for row in status.get("plugins", []):
        if row.get("id") == plugin_id:
            return dict(row)
    known = ", ".join(str(r.get("id")) for r in status.get("plugins", [])) or "none found"
    raise NotFound(f"no plugin {plugin_id!r} (plugins: {known})", hint="see `openclaw plugins list`")


def summary(row: dict[str, Any]) -> str:
    """What a plugin registered, in one line: `tools: a, b; routes: GET /plugins/x/y`."""
    parts = [f"{kind}: {', '.join(names)}" for kind, names in row.get("registered", {}).items()]
    if row.get("hooks"):
        parts.append(f"hooks: {', '.join(row['hooks'])}")
    return "; ".join(parts) or "-"


def check_plugins(settings: Settings, home_root: Path) -> list[Finding]:
    """doctor: an error per plugin that did not load, a warning per plugin with counted errors, per load
    problem, and per `channels.<id>` section no loaded plugin registers."""
    from openclaw_cli.plugins.host import load_plugins

    host = load_plugins(settings.plugins, home_root)
    findings: list[Finding] = []
    for record in host.records.values():
        if record.state == "error":
            findings.append(
                Finding(
                    CHECK,
                    "error",
                    f"plugin {record.id} did not load: {record.last_error}",
                    hint=f"fix it, or set plugins.entries.{record.id}.enabled to false",
                    path=record.where,
                )
            )
        elif record.errors:
            findings.append(
                Finding(
                    CHECK,
                    "warning",
                    f"plugin {record.id}: {record.errors} error(s) at load, the last: {record.last_error}",
                    path=record.where,
                )
            )
    for problem in host.problems:
        findings.append(Finding(CHECK, "warning", problem, hint="see plugins.load.paths in openclaw.json"))
    for name in sorted(settings.channels.model_extra or {}):
        if name not in host.registered.channels:
            findings.append(
                Finding(
                    CHECK,
                    "warning",
                    f"channels.{name} is set but no loaded plugin registers a channel {name!r}",
                    hint="load the plugin that provides it, or remove the section (a typo?)",
                )
            )
    if not findings and host.records:
        loaded = [r.id for r in host.loaded]
        findings.append(Finding(CHECK, "ok", f"{len(loaded)} plugin(s) loaded: {', '.join(loaded) or '-'}"))
    return findings
