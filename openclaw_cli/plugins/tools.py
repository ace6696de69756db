"""Plugin tools in a turn: the specs offered to an agent's model, and one call run (arguments checked
against the tool's JSON schema first; a bad call, an error or a timeout answered to the model as the
built-in tools answer theirs: `{"error": ...}`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from openclaw_cli.plugins.host import PluginHost
    from openclaw_cli.plugins.registry import ToolDef


def offered(host: PluginHost, allowed: list[str] | None) -> list[ToolDef]:
    """The plugin tools an agent's model is offered: all, or those its `agents.list[].tools` names."""
    tools = host.registered.tools.values()
    return [t for t in tools if allowed is None or t.name in allowed]


def specs(host: PluginHost, allowed: list[str] | None) -> list[dict[str, Any]]:
    return [tool.spec() for tool in offered(host, allowed)]


def run(host: PluginHost, tool: ToolDef, arguments: str) -> dict[str, Any]:
    """Run the model's call of a plugin tool; the result (or the error) as a JSON-able dict."""
    from openclaw_cli.core.textcheck import tool_arguments

    raw = tool_arguments(arguments)
    if isinstance(raw, str):
        return {"error": raw}
    problem = next(iter(sorted(tool.validator.iter_errors(raw), key=lambda e: list(e.path))), None)
    if problem is not None:
        where = ".".join(str(part) for part in problem.path) or "arguments"
        return {"error": f"invalid arguments ({where}: {problem.message})"}
    record = host.records[tool.plugin_id]
    ok, value = host.runner.attempt(record, f"tool {tool.name}", tool.fn, **raw)
    if not ok:
        return {"error": f"tool {tool.name} failed ({value})"}
    if not isinstance(value, dict):
        value = {"result": value}
    try:
        return dict(json.loads(json.dumps(value, ensure_ascii=False, default=str)))
    except (TypeError, ValueError) as exc:
        record.fail(f"tool {tool.name}", f"returned what is not JSON: {exc}")
        return {"error": f"tool {tool.name} returned what is not JSON"}
