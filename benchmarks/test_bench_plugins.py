"""The plugin layer's cost on a turn (issue 50), with 0, 1 and 10 plugins that implement every event hook.

- `plugin layer`: exactly the plugin calls one turn with one tool call makes (agent/turn/plugin_hooks.py:
  message_received, session_start, before_prompt_build, the tool specs, before/after_tool_call around a
  built-in tool, message_sending, turn_end), on a real PluginHost loaded from plugin files, without the
  rest of the turn. With 0 plugins this is the cost every turn pays when none is installed.
- `turn`: a whole in-process turn (real session files, the fake model on loopback answering at once), for
  scale: what the layer adds next to everything else a turn does.

Run: .venv/bin/python -m pytest -n 0 benchmarks/test_bench_plugins.py --benchmark-only
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from openclaw_cli.agent.turn import plugin_hooks
from openclaw_cli.agent.turn.requests import TurnRequest, TurnResult
from openclaw_cli.agent.turn.state import TurnContext
from openclaw_cli.config.models import PluginsSettings, Settings
from openclaw_cli.plugins.host import PluginHost, load_plugins
from openclaw_cli.plugins.specs import EVENT_HOOKS
from tests.agent_helpers import chat_settings, runtime_for, turn
from tests.fake_openai import FakeOpenAI

HOOKS = "\n".join(f"@hookimpl\ndef {hook}(ctx):\n    return None\n" for hook in EVENT_HOOKS)
PLUGIN = f"from openclaw_cli.plugins import hookimpl\n\n{HOOKS}"


def _plugins(folder: Path, count: int) -> dict[str, Any]:
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        (folder / f"bench_every_hook_{index}.py").write_text(PLUGIN, encoding="utf-8")
    entries = {f"bench_every_hook_{i}": {"allowConversationAccess": True} for i in range(count)}
    return {"load": {"paths": [str(folder)] if count else []}, "entries": entries}


def _turn_context(host: PluginHost | None) -> TurnContext:
    services: Any = SimpleNamespace(plugins=host, agent_id="main")
    request = TurnRequest("main", "agent:main:main", "what is on today?", "r1", user_id="owner")
    return TurnContext(
        services,
        Settings(),
        request,
        lambda kind, payload: None,
        SimpleNamespace(is_set=lambda: False),
        lambda: None,  # type: ignore[arg-type,return-value]
        TurnResult("r1", "s-1", "ok", reply="nothing today"),
    )


def _layer(turn_ctx: TurnContext) -> None:
    """The plugin calls of one turn with one tool call."""
    plugin_hooks.received(turn_ctx)
    plugin_hooks.session_event(turn_ctx, "session_start", "s-1", "created")
    plugin_hooks.prompt_blocks(turn_ctx, "s-1")
    plugin_hooks.tool_specs(turn_ctx)
    plugin_hooks.run_tool(turn_ctx, "memory_search", '{"query": "today"}', lambda: {"results": []})
    plugin_hooks.tool_specs(turn_ctx)
    plugin_hooks.sending(turn_ctx, "nothing today")
    plugin_hooks.turn_end(turn_ctx)


@pytest.mark.parametrize("count", [0, 1, 10])
def test_bench_plugin_layer_per_turn(benchmark, tmp_path: Path, count: int) -> None:  # type: ignore[no-untyped-def]
    settings = PluginsSettings.model_validate(_plugins(tmp_path / "plugins", count))
    host = load_plugins(settings, tmp_path)
    assert len(host.loaded) == count
    turn_ctx = _turn_context(host)
    _layer(turn_ctx)
    benchmark.pedantic(_layer, args=(turn_ctx,), rounds=200, warmup_rounds=5)
    benchmark.extra_info["plugins"] = count
    benchmark.extra_info["hook_calls_per_turn"] = 8 * count
    assert all(record.errors == 0 for record in host.records.values())


@pytest.mark.parametrize("count", [0, 10])
def test_bench_turn_with_plugins(benchmark, tmp_path: Path, count: int) -> None:  # type: ignore[no-untyped-def]
    fake = FakeOpenAI().start()
    fake.respond_with(lambda body: "ok")
    settings = chat_settings(
        fake.url,
        embed_url=fake.url,
        plugins=_plugins(tmp_path / "plugins", count),
        memory={"extraction": {"enabled": False}},
    )
    runtime = runtime_for(tmp_path / "home", settings)
    rounds = iter(range(10**6))
    try:
        turn(runtime, "warm up")

        def one() -> None:
            result, _ = turn(runtime, "what is on today?", run_id=f"r{next(rounds)}")
            assert result.status == "ok"

        benchmark.pedantic(one, rounds=30, warmup_rounds=2)
        benchmark.extra_info["plugins"] = count
    finally:
        runtime.close()
        fake.stop()
