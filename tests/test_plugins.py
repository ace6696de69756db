"""Plugins in a turn, in-process (issue 50): a real runtime, real session files, the fake model on loopback.

The plugins are tests/plugins_fixture/ (loaded through plugins.load.paths); each test picks the ones it
needs with `plugins.allow`. The gateway's side (routes, channels, `plugins list` from a running gateway,
doctor, an installed entry point) is test_plugins_gateway.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.config.models import PluginsSettings
from openclaw_cli.plugins.host import PluginHost, load_plugins
from tests.agent_helpers import chat_settings, runtime_for, tool_call, turn
from tests.fake_openai import FakeOpenAI, last_user_text, module_fake

FIXTURE = Path(__file__).parent / "plugins_fixture"
fake = module_fake


def _module(name: str) -> Any:
    return sys.modules[f"openclaw_plugin_{name}"]


def _plugins(*allow: str, **entries: dict[str, Any]) -> dict[str, Any]:
    return {"load": {"paths": [str(FIXTURE)]}, "allow": list(allow), "entries": entries}


def _runtime(tmp_path: Path, fake: FakeOpenAI, plugins: dict[str, Any], **overrides: Any) -> Any:
    settings = chat_settings(
        fake.url, embed_url=fake.url, plugins=plugins, memory={"extraction": {"enabled": False}}, **overrides
    )
    return runtime_for(tmp_path / "home", settings)


def _chat_bodies(fake: FakeOpenAI) -> list[dict[str, Any]]:
    """The agent's own chat requests (they offer tools), in order."""
    return [r.body for r in fake.requests_to("/chat/completions") if r.body.get("tools")]


@pytest.fixture(autouse=True)
def _fresh(fake: FakeOpenAI) -> None:
    fake.requests.clear()
    fake.respond_with(lambda body: f"echo: {last_user_text(body)}")
    for name in ("kitchen", "nosy"):
        if f"openclaw_plugin_{name}" in sys.modules:
            _module(name).SEEN.clear()


# -- the five kinds -------------------------------------------------------------------------------------


def test_the_model_is_offered_a_plugin_tool_calls_it_and_gets_its_result(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    runtime = _runtime(tmp_path, fake, _plugins("kitchen", kitchen={"allowConversationAccess": True}))
    fake.script_chat(tool_call("add_numbers", {"a": 2, "b": 40}), "The sum is 42.")
    result, events = turn(runtime, "what is 2 + 40?")
    runtime.close()
    assert result.status == "ok" and result.reply == "The sum is 42."
    first, second = _chat_bodies(fake)[:2]
    offered = {tool["function"]["name"] for tool in first["tools"]}
    assert {"add_numbers", "memory_search"} <= offered
    tool_message = [m for m in second["messages"] if m["role"] == "tool"][-1]
    assert json.loads(tool_message["content"]) == {"sum": 42}
    assert events.of("tool")[0]["result"] == {"sum": 42}
    assert ("tool add_numbers", (2, 40)) in _module("kitchen").SEEN


def test_arguments_that_break_the_schema_are_answered_as_an_error_and_fn_never_runs(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    runtime = _runtime(tmp_path, fake, _plugins("kitchen"))
    fake.script_chat(tool_call("add_numbers", {"a": "two", "b": 3}), "Sorry.")
    result, events = turn(runtime, "add these")
    runtime.close()
    assert result.status == "ok"
    error = events.of("tool")[0]["result"]["error"]
    assert error.startswith("invalid arguments (a:") and "integer" in error
    assert not [seen for seen in _module("kitchen").SEEN if seen[0] == "tool add_numbers"]


def test_an_agent_whose_tools_list_leaves_a_plugin_tool_out_is_not_offered_it(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    agents = {"list": [{"id": "main", "tools": []}]}
    runtime = _runtime(tmp_path, fake, _plugins("kitchen"), agents=agents)
    fake.script_chat(tool_call("add_numbers", {"a": 1, "b": 1}), "no tool")
    result, events = turn(runtime, "add one and one")
    runtime.close()
    assert "add_numbers" not in {t["function"]["name"] for t in _chat_bodies(fake)[0]["tools"]}
    assert events.of("tool")[0]["result"] == {"error": "unknown tool 'add_numbers'"}
    assert result.status == "ok"


def test_a_plugin_provider_answers_a_turn(tmp_path: Path, fake: FakeOpenAI) -> None:
    runtime = _runtime(tmp_path, fake, _plugins("kitchen"), llm={"model": "kitchen/chef-1"})
    result, events = turn(runtime, "what is for dinner?")
    runtime.close()
    assert result.status == "ok"
    assert result.reply == "kitchen chef-1 heard: what is for dinner?"
    assert events.text() == result.reply
    assert not _chat_bodies(fake)  # nothing went to the OpenAI-compatible server


STREAMING_PROVIDER = """
from openclaw_cli.plugins import hookimpl

def chunk(delta):
    return {"choices": [{"index": 0, "delta": delta}]}

def complete(model, messages, tools=None, stream=False, **options):
    if messages[-1]["role"] == "tool":  # the tool's result: answer in pieces, with usage
        yield chunk({"content": "the tool said "})
        yield chunk({"content": messages[-1]["content"]})
        yield {"choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 5}}
        return
    assert stream and any(t["function"]["name"] == "add_numbers" for t in tools)
    call = {"id": "c1", "type": "function", "function": {"name": "add_numbers", "arguments": '{"a": 1, "b": 2}'}}
    yield chunk({"tool_calls": [{"index": 0, **call}]})

@hookimpl
def register_providers(register):
    register("streamer", complete)
"""


def test_a_plugin_provider_may_stream_and_call_tools(tmp_path: Path, fake: FakeOpenAI) -> None:
    (tmp_path / "streamer.py").write_text(STREAMING_PROVIDER, encoding="utf-8")
    plugins = {"load": {"paths": [str(FIXTURE / "kitchen.py"), str(tmp_path / "streamer.py")]}}
    runtime = _runtime(tmp_path, fake, plugins, llm={"model": "streamer/s1"})
    result, events = turn(runtime, "add one and two")
    runtime.close()
    assert (result.status, result.reply) == ("ok", 'the tool said {"sum": 3}')
    assert events.of("tool")[0]["result"] == {"sum": 3}
    assert result.usage is not None and (result.usage.prompt_tokens, result.usage.cost) == (11, None)


def test_message_sending_rewrites_the_reply_that_is_stored_and_streamed(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    runtime = _runtime(tmp_path, fake, _plugins("kitchen", kitchen={"allowConversationAccess": True}))
    fake.script_chat("the code is SECRET, keep it")
    result, events = turn(runtime, "tell me the code")
    stored = runtime.services("main").sessions.read_messages(result.session_id).messages
    runtime.close()
    assert result.reply == "the code is [hidden], keep it"
    assert stored[-1]["content"] == "the code is [hidden], keep it"
    assert "SECRET" not in events.text() and events.text() == result.reply  # the original never streamed


def test_before_prompt_build_adds_a_system_block_and_the_event_hooks_are_called(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    runtime = _runtime(tmp_path, fake, _plugins("kitchen", kitchen={"allowConversationAccess": True}))
    result, _ = turn(runtime, "hello there")
    runtime.close()
    system = _chat_bodies(fake)[0]["messages"][0]
    assert system["role"] == "system" and "KITCHEN-BLOCK" in system["content"]
    hooks = [hook for hook, _ in _module("kitchen").SEEN]
    assert hooks == [
        "message_received",
        "session_start",
        "before_prompt_build",
        "message_sending",
        "turn_end",
    ]
    end = _module("kitchen").SEEN[-1][1]
    assert (end.status, end.reply, end.session_id) == ("ok", result.reply, result.session_id)


def test_before_tool_call_blocks_a_call_and_message_received_cancels_a_message(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    runtime = _runtime(tmp_path, fake, _plugins("guard", guard={"allowConversationAccess": True}))
    fake.script_chat(tool_call("memory_forget", {"id": "m-1"}), "I could not forget it.")
    result, events = turn(runtime, "forget m-1")
    assert result.status == "ok"
    blocked = events.of("tool")[0]["result"]["error"]
    assert blocked == "the call was not run: forgetting is switched off (blocked by plugin guard)"
    before = len(_chat_bodies(fake))
    dropped, _ = turn(runtime, "please drop this message", run_id="r2")
    stored = runtime.services("main").sessions.read_messages(result.session_id).messages
    runtime.close()
    assert dropped.reply == "" and "held this message back" in dropped.notices[0]
    assert len(_chat_bodies(fake)) == before  # no model call
    assert not [m for m in stored if "drop this" in str(m.get("content"))]


# -- failing plugins ------------------------------------------------------------------------------------


def test_a_plugin_raising_in_every_hook_never_breaks_the_turn_and_its_errors_are_counted(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    runtime = _runtime(tmp_path, fake, _plugins("faulty", faulty={"allowConversationAccess": True}))
    fake.script_chat(tool_call("memory_search", {"query": "tea"}), "done searching")
    result, _ = turn(runtime, "what tea do I like?")
    host = runtime.plugins
    runtime.close()
    assert result.status == "ok" and result.reply == "done searching"
    record = host.records["faulty"]
    assert record.state == "loaded"
    assert record.registered == {}  # every registration hook raised: nothing half-registered is kept
    failed = {hook for hook in record.logged}
    assert {
        "register_tools",
        "register_channels",
        "register_providers",
        "register_routes",
        "register_skills",
        "message_received",
        "session_start",
        "before_prompt_build",
        "before_tool_call",
        "after_tool_call",
        "message_sending",
        "turn_end",
    } <= failed
    assert record.errors >= len(failed)
    assert record.last_error == "turn_end: RuntimeError: faulty fails in turn_end"


def test_a_plugin_sleeping_past_its_timeout_never_holds_the_turn(tmp_path: Path, fake: FakeOpenAI) -> None:
    plugins = _plugins("sleepy", sleepy={"hookTimeoutSeconds": 0.2})
    runtime = _runtime(tmp_path, fake, plugins)
    try:
        first, _ = turn(runtime, "are you awake?")
        record = runtime.plugins.records["sleepy"]
        after_first = (record.errors, record.last_error)
        second, _ = turn(runtime, "still there?", run_id="r2")  # its hooks still run: skipped this time
    finally:
        _module("sleepy").WAKE.set()
        runtime.close()
    assert (first.status, first.reply) == ("ok", "echo: are you awake?")
    assert (second.status, second.reply) == ("ok", "echo: still there?")
    assert after_first == (4, "turn_end: passed its timeout of 0.2 s")  # each of its four hooks
    assert record.errors == 8
    assert str(record.last_error).startswith("turn_end: skipped: an earlier call passed its timeout")


def test_an_invalid_config_leaves_the_plugin_unloaded_with_one_line_naming_it_and_the_field(
    tmp_path: Path,
) -> None:
    settings = PluginsSettings.model_validate(_plugins("badconfig", badconfig={"config": {"port": "eighty"}}))
    host = load_plugins(settings, tmp_path)
    record = host.records["badconfig"]
    assert record.state == "error"
    assert record.last_error is not None and "\n" not in record.last_error
    assert record.last_error.startswith("config: invalid config: plugins.entries.badconfig.config.port:")
    assert "badconfig_tool" not in host.registered.tools


# -- isolation --------------------------------------------------------------------------------------------


def test_a_plugin_without_conversation_access_never_receives_message_text(
    tmp_path: Path, fake: FakeOpenAI
) -> None:
    runtime = _runtime(tmp_path, fake, _plugins("nosy", "kitchen"))
    fake.script_chat(tool_call("add_numbers", {"a": 7, "b": 8}), "fifteen, my secret friend")
    result, _ = turn(runtime, "my password is hunter2, add 7 and 8")
    runtime.close()
    assert result.reply == "fifteen, my secret friend"  # nosy's rewrite was ignored: it read nothing
    seen = _module("nosy").SEEN
    assert {hook for hook, _ in seen} >= {
        "message_received",
        "message_sending",
        "before_tool_call",
        "turn_end",
    }
    dumped = repr(seen)
    for secret in ("hunter2", "fifteen", "secret friend", '"a": 7', '"sum": 15'):
        assert secret not in dumped
    for _hook, ctx in seen:
        for name in getattr(ctx, "CONTENT", ()):
            assert getattr(ctx, name) is None


# -- load rules -------------------------------------------------------------------------------------------


def test_deny_wins_over_allow_disabled_entries_are_not_imported_and_the_order_is_the_folders(
    tmp_path: Path,
) -> None:
    settings = PluginsSettings.model_validate(
        {
            "load": {"paths": [str(FIXTURE)]},
            "allow": ["kitchen", "guard", "nosy"],
            "deny": ["guard"],
            "entries": {"nosy": {"enabled": False}},
        }
    )
    sys.modules.pop("openclaw_plugin_sleepy", None)
    host = load_plugins(settings, tmp_path)
    states = {pid: record.state for pid, record in host.records.items()}
    assert list(states) == ["badconfig", "faulty", "guard", "kitchen", "nosy", "sleepy"]  # sorted by name
    assert states == {
        "badconfig": "not-allowed",
        "faulty": "not-allowed",
        "guard": "denied",
        "kitchen": "loaded",
        "nosy": "disabled",
        "sleepy": "not-allowed",
    }
    assert "openclaw_plugin_sleepy" not in sys.modules  # a plugin not loaded is never imported


def test_a_load_path_that_does_not_exist_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    settings = PluginsSettings.model_validate({"load": {"paths": ["nowhere/plugin.py"]}})
    host = load_plugins(settings, tmp_path)
    assert host.problems == [
        f"plugins.load.paths: {tmp_path / 'nowhere/plugin.py'} is neither a .py file nor a folder"
    ]


def test_a_plugin_that_does_not_import_is_an_error_of_that_plugin(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("raise ImportError('needs a module that is not installed')\n", encoding="utf-8")
    host = load_plugins(PluginsSettings.model_validate({"load": {"paths": [str(broken)]}}), tmp_path)
    record = host.records["broken"]
    assert (record.state, record.last_error) == (
        "error",
        "import: ImportError: needs a module that is not installed",
    )


def test_no_plugins_means_no_hooks_and_no_tools() -> None:
    host = PluginHost()
    assert not any(host.implements(hook) for hook in ("message_received", "turn_end", "before_tool_call"))
    assert host.status() == {"plugins": [], "problems": []}
