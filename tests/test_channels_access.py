"""Access control through a real gateway: pairing, allowlist, disabled DMs, and the CLI that manages them."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

from tests.channel_helpers import chat_requests, fakes, start, telegram_config, wait_for
from tests.conftest import run_cli


def _lines(home: Path) -> int:
    """Transcript lines in every session of the home."""
    return sum(len(p.read_text().splitlines()) for p in home.glob("agents/*/sessions/*/messages.jsonl"))


def test_a_stranger_gets_a_pairing_code_and_nothing_else_until_approved(tmp_path: Path) -> None:
    home = tmp_path / "h"
    with fakes() as (model, tg):
        telegram_config(home, model, tg)  # dmPolicy pairing is the default
        gateway = start(home)
        try:
            tg.dm(4242, "remember that my password is hunter2")
            sent = tg.wait_sent(1)
            code = re.search(r"pairing code is ([A-Z0-9]{8})", sent[0]["text"])
            assert code is not None, sent
            tg.dm(4242, "hello? remember that I like tea")  # still pending: no second code, no turn
            tg.dm(5151, "someone else")  # another stranger: their own code
            wait_for(lambda: len(tg.sent) >= 2, "the second stranger's code")
            assert [m["chat_id"] for m in tg.sent] == ["4242", "5151"]
            assert chat_requests(model) == []
            assert _lines(home) == 0
            assert not list(home.glob("agents/*/memory/*.sqlite")) or json.loads(
                run_cli(home, "memory", "list", "--json").stdout or "[]"
            ) in ([], {"memories": []})
            listed = json.loads(run_cli(home, "pairing", "list", "--json").stdout)["requests"]
            assert {r["sender"] for r in listed} == {"4242", "5151"}
            pairing = home / "channels" / "telegram" / "default" / "pairing.json"
            assert stat.S_IMODE(pairing.stat().st_mode) == 0o600
            assert "hunter2" not in pairing.read_text()

            approved = run_cli(home, "pairing", "approve", "telegram", code.group(1).lower())
            assert approved.returncode == 0, approved.stderr
            denied_code = next(r["code"] for r in listed if r["sender"] == "5151")
            assert run_cli(home, "pairing", "deny", "telegram", denied_code).returncode == 0
            again = run_cli(home, "pairing", "approve", "telegram", denied_code)
            assert again.returncode != 0 and "no open pairing request" in again.stderr
            assert len(again.stderr.strip().splitlines()) == 1

            tg.dm(4242, "now can we talk?")
            wait_for(lambda: "echo: now can we talk?" in tg.texts_to(4242), "the approved sender answered")
        finally:
            gateway.stop()
        assert "Traceback" not in gateway.log()
        # approval persists across restarts
        gateway = start(home)
        try:
            tg.dm(4242, "after restart")
            wait_for(lambda: "echo: after restart" in tg.texts_to(4242), "answered after a restart")
        finally:
            gateway.stop()
        prompts = json.dumps(chat_requests(model))
        assert "hunter2" not in prompts and "I like tea" not in prompts


def test_allowlist_and_disabled_policies_answer_nobody_else(tmp_path: Path) -> None:
    home = tmp_path / "h"
    with fakes() as (model, tg):
        telegram_config(home, model, tg, dmPolicy="allowlist", allowFrom=["1001"])
        gateway = start(home)
        try:
            tg.dm(2002, "let me in")
            tg.dm(1001, "I am allowed")
            wait_for(lambda: tg.texts_to(1001), "the allowed sender answered")
            assert tg.texts_to(2002) == []
            # a config edit applies to the running gateway: DMs disabled
            telegram_config(home, model, tg, dmPolicy="disabled", allowFrom=["1001"])
            wait_for(lambda: "channels.telegram changed: reloaded" in gateway.log(), "the reload")
            tg.dm(1001, "are you there")
            tg.dm(1001, "hello?")
            wait_for(lambda: "dmPolicy disabled" in gateway.log(), "the refusal logged")
            assert tg.texts_to(1001) == ["echo: I am allowed"]
        finally:
            gateway.stop()
        assert "Traceback" not in gateway.log()


def test_pairing_commands_refuse_bad_input_in_one_line(tmp_path: Path) -> None:
    home = tmp_path / "h"
    for args in (("approve", "whatsapp", "ABC"), ("approve", "telegram", "NOPE1234"), ("deny", "../x", "A")):
        result = run_cli(home, "pairing", *args)
        assert result.returncode != 0
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "Traceback" not in result.stderr


def test_doctor_names_channel_config_that_cannot_work(tmp_path: Path) -> None:
    home = tmp_path / "h"
    home.mkdir(mode=0o700)
    config = {
        "channels": {
            "telegram": {
                "enabled": True,
                "mode": "webhook",
                "webhookUrl": "https://x/hook",
                "dmPolicy": "allowlist",
            },
            "slack": {"enabled": True, "botToken": "xoxb-secret-value"},
        }
    }
    (home / "openclaw.json").write_text(json.dumps(config))
    result = run_cli(home, "doctor", "--json")
    findings = [f for f in json.loads(result.stdout)["findings"] if f["check"] == "channels"]
    messages = " | ".join(f["message"] for f in findings)
    assert "channels.telegram is enabled but has no bot token" in messages
    assert "webhookUrl has no webhookSecret" in messages
    assert "allowFrom is empty" in messages
    assert "channels.slack has no signingSecret" in messages
    assert "xoxb-secret-value" not in result.stdout + result.stderr
    fine = run_cli(home, "doctor", "--json", env={"TELEGRAM_BOT_TOKEN": "1:abc"})
    assert "no bot token" not in fine.stdout
