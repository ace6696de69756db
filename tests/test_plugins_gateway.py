"""Plugins in a running gateway and through the CLI (issue 50): routes (token, 401, public), a plugin
channel that receives and answers (with message_sending's rewrite), `plugins list` with the errors the
gateway counted, doctor's report of an invalid config, and a plugin installed through an entry point.

One gateway for the module (kitchen + faulty, from tests/plugins_fixture/ through plugins.load.paths).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.channel_helpers import wait_for
from tests.conftest import run_cli
from tests.fake_openai import FakeOpenAI
from tests.gateway_helpers import Gateway, echo_last_user, http_json, running_gateway, write_config

FIXTURE = Path(__file__).parent / "plugins_fixture"


@pytest.fixture(scope="module")
def model() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    server.respond_with(echo_last_user)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory, model: FakeOpenAI) -> Iterator[Gateway]:
    home = tmp_path_factory.mktemp("plugins-gw") / "home"
    write_config(
        home,
        model,
        memory={"extraction": {"enabled": False}},
        plugins={
            "load": {"paths": [str(FIXTURE)]},
            "allow": ["kitchen", "faulty"],
            "entries": {
                "kitchen": {"allowConversationAccess": True, "config": {"greeting": "hi from the kitchen"}},
                "faulty": {"allowConversationAccess": True},
            },
        },
        channels={"loopchat": {"enabled": True, "dmPolicy": "open"}},
    )
    with running_gateway(home) as gw:
        yield gw


def test_a_plugin_route_needs_the_token_unless_public(gateway: Gateway) -> None:
    status, body = http_json(f"{gateway.http}/plugins/kitchen/hello", token=gateway.token)
    assert (status, body) == (200, {"greeting": "hi from the kitchen"})
    status, body = http_json(f"{gateway.http}/plugins/kitchen/hello")
    assert status == 401 and body["error"]["type"] == "authentication_error"
    status, _ = http_json(f"{gateway.http}/plugins/kitchen/hello", token="wrong-token-" + "x" * 32)
    assert status == 401
    assert http_json(f"{gateway.http}/plugins/kitchen/public") == (200, {"greeting": "hi from the kitchen"})
    assert http_json(f"{gateway.http}/plugins/faulty/anything", token=gateway.token)[0] == 404


def test_a_plugin_channel_receives_and_answers_with_the_reply_message_sending_rewrote(
    gateway: Gateway,
) -> None:
    event = {"event_id": "ev-1", "sender": "friend-1", "text": "say SECRET please"}
    status, _ = http_json(f"{gateway.http}/channels/loopchat/events", event)
    assert status == 200

    def replies() -> list[dict[str, Any]]:
        return list(http_json(f"{gateway.http}/plugins/kitchen/sent", token=gateway.token)[1]["sent"])

    sent = wait_for(replies, "the loopchat reply")
    # The fake model echoes the message; kitchen's message_sending hides SECRET; faulty raised in every hook.
    assert sent == [{"chat": "friend-1", "text": "echo: say [hidden] please"}]
    status = run_cli(
        gateway.home, "channels", "status", "--json", env={"OPENCLAW_GATEWAY_TOKEN": gateway.token}
    )
    loop = {row["channel"]: row for row in status.json()["channels"]}["loopchat"]
    assert (loop["enabled"], loop["connected"], loop["mode"], loop["pendingSends"]) == (True, True, "loop", 0)


def test_plugins_list_shows_the_errors_the_running_gateway_counted(gateway: Gateway) -> None:
    wait_for(
        lambda: http_json(f"{gateway.http}/plugins/kitchen/sent", token=gateway.token)[1]["sent"],
        "a turn through the channel",
    )
    listed = run_cli(gateway.home, "plugins", "list", "--json", env={"OPENCLAW_GATEWAY_TOKEN": gateway.token})
    assert listed.returncode == 0, listed.stderr
    payload = listed.json()
    assert payload["gateway"] == f"127.0.0.1:{gateway.port}"
    rows = {row["id"]: row for row in payload["plugins"]}
    kitchen, faulty = rows["kitchen"], rows["faulty"]
    assert (kitchen["state"], kitchen["version"], kitchen["source"], kitchen["errors"]) == (
        "loaded",
        "1.2.3",
        "path",
        0,
    )
    assert kitchen["registered"] == {
        "tools": ["add_numbers"],
        "channels": ["loopchat"],
        "providers": ["kitchen"],
        "routes": [
            "GET /plugins/kitchen/hello",
            "GET /plugins/kitchen/public",
            "GET /plugins/kitchen/sent",
            "POST /plugins/kitchen/boom",
        ],
    }
    assert faulty["state"] == "loaded" and faulty["registered"] == {}
    # five registration hooks at load, then gateway_start and the channel turn's hooks at run time
    assert faulty["errors"] >= 10
    assert "RuntimeError: faulty fails in" in faulty["lastError"]
    assert rows["sleepy"]["state"] == "not-allowed"

    info = run_cli(gateway.home, "plugins", "info", "faulty", env={"OPENCLAW_GATEWAY_TOKEN": gateway.token})
    assert info.returncode == 0, info.stderr
    assert (
        "state: loaded" in info.stdout and "lastError: " in info.stdout and "faulty fails in" in info.stdout
    )


def test_a_route_that_raises_answers_500_is_counted_and_the_gateway_goes_on(gateway: Gateway) -> None:
    status, body = http_json(f"{gateway.http}/plugins/kitchen/boom", {}, token=gateway.token)
    assert (status, body) == (500, {"error": "plugin kitchen failed"})
    assert http_json(f"{gateway.http}/plugins/kitchen/hello", token=gateway.token)[0] == 200
    status, payload = http_json(f"{gateway.http}/rpc/plugins.status", {}, token=gateway.token)
    kitchen = {row["id"]: row for row in payload["payload"]["plugins"]}["kitchen"]
    assert (kitchen["errors"], kitchen["lastError"]) == (
        1,
        "route POST /boom: RuntimeError: the kitchen route broke",
    )


def test_plugins_info_of_an_unknown_id_is_one_line_and_exit_code_1(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_config(home, None, plugins={"load": {"paths": [str(FIXTURE / "guard.py")]}})
    result = run_cli(home, "plugins", "info", "nope")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "openclaw: error: no plugin 'nope' (plugins: guard) (see `openclaw plugins list`)"
    ]


def test_doctor_and_plugins_list_report_an_invalid_config_naming_the_plugin_and_field(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_config(
        home,
        None,
        plugins={
            "load": {"paths": [str(FIXTURE / "badconfig.py")]},
            "entries": {"badconfig": {"config": {"port": "eighty"}}},
        },
        channels={"nochat": {"enabled": True}},
    )
    doctor = run_cli(home, "doctor", "--json")
    found = [f for f in doctor.json()["findings"] if f["check"] == "plugins"]
    assert [f["severity"] for f in found] == ["error", "warning"]
    assert found[0]["message"].startswith(
        "plugin badconfig did not load: config: invalid config: plugins.entries.badconfig.config.port: "
    )
    assert found[1]["message"] == "channels.nochat is set but no loaded plugin registers a channel 'nochat'"
    assert doctor.returncode != 0
    listed = run_cli(home, "plugins", "list")
    assert listed.returncode == 0
    assert "badconfig  -  path  error  errors=1" in listed.stdout
    assert "last error: config: invalid config: plugins.entries.badconfig.config.port:" in listed.stdout


def test_a_plugin_installed_through_an_entry_point_is_found_and_loaded(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "ep_demo-0.4.0.dist-info").mkdir(parents=True)
    (site / "ep_demo-0.4.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: ep-demo\nVersion: 0.4.0\n", encoding="utf-8"
    )
    (site / "ep_demo-0.4.0.dist-info" / "entry_points.txt").write_text(
        "[openclaw.plugins]\nepdemo = ep_demo\n", encoding="utf-8"
    )
    (site / "ep_demo.py").write_text(
        "from openclaw_cli.plugins import hookimpl\n\n"
        "@hookimpl\n"
        "def register_tools(register):\n"
        "    register(name='ep_tool', description='d', parameters={'type': 'object'}, fn=lambda: 1)\n",
        encoding="utf-8",
    )
    home = tmp_path / "home"
    write_config(home, None)
    result = run_cli(home, "plugins", "list", "--json", env={"PYTHONPATH": str(site)})
    assert result.returncode == 0, result.stderr
    rows = {row["id"]: row for row in result.json()["plugins"]}
    assert rows["epdemo"] == {
        **rows["epdemo"],
        "source": "entry-point",
        "where": "ep_demo",
        "version": "0.4.0",
        "state": "loaded",
        "registered": {"tools": ["ep_tool"]},
    }
    denied = json.dumps({"plugins": {"deny": ["epdemo"]}})
    (home / "openclaw.json").write_text(denied, encoding="utf-8")
    again = run_cli(home, "plugins", "list", "--json", env={"PYTHONPATH": str(site)})
    assert {row["id"]: row["state"] for row in again.json()["plugins"]} == {"epdemo": "denied"}


def test_an_embedding_model_named_after_a_plugin_provider_is_one_line_and_exit_code_1(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_config(
        home,
        None,
        plugins={"load": {"paths": [str(FIXTURE / "kitchen.py")]}},
        llm={"model": "kitchen/chef-1"},
        memory={"embedding": {"provider": "litellm", "model": "kitchen/emb"}},
    )
    result = run_cli(home, "chat", "--local", "what is for dinner?")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "openclaw: error: memory.embedding.model 'kitchen/emb' names the plugin provider 'kitchen', which serves "
        "chat models only (set memory.embedding.model to a local model or an API embedding model)"
    ]
