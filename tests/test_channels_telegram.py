"""The Telegram channel end to end: a real gateway process, a fake Bot API and a fake model on loopback."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.channel_helpers import chat_requests, fakes, start, telegram_config, wait_for
from tests.conftest import run_cli
from tests.fake_openai import FakeOpenAI
from tests.fake_telegram import TOKEN, FakeTelegram
from tests.gateway_helpers import Gateway, echo_last_user


@dataclass
class Shared:
    """One gateway (dmPolicy open) for the tests that need nothing but the default config and count no
    update ids or offsets. Each test writes from its own chat ids and sees only what happened since it
    began (`log()`, the fakes' records); tests of offsets, restarts or other configs start their own."""

    model: FakeOpenAI
    tg: FakeTelegram
    gateway: Gateway
    log_start: int = 0

    def log(self) -> str:
        return self.gateway.log()[self.log_start :]


@pytest.fixture(scope="module")
def shared_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shared]:
    home = tmp_path_factory.mktemp("telegram") / "h"
    with fakes() as (model, tg):
        telegram_config(home, model, tg, dmPolicy="open")
        gateway = start(home)
        try:
            yield Shared(model, tg, gateway)
        finally:
            gateway.stop()
        assert TOKEN not in gateway.log() and "Traceback" not in gateway.log()


@pytest.fixture
def shared(shared_gateway: Shared) -> Shared:
    """The shared gateway with fresh fake state: nothing recorded or queued to fail, the echo model."""
    s = shared_gateway
    with s.tg._cond:
        s.tg.sent.clear()
        s.tg.calls.clear()
        s.tg._failures.clear()
    with s.model._lock:
        s.model.requests.clear()
    s.model.respond_with(echo_last_user)
    s.log_start = len(s.gateway.log())
    return s


def test_a_dm_is_answered_in_its_chat_and_the_offset_is_saved_privately(tmp_path: Path) -> None:
    home = tmp_path / "h"
    with fakes() as (model, tg):
        telegram_config(home, model, tg, dmPolicy="open")
        gateway = start(home)
        try:
            tg.dm(1001, "hello there")
            sent = tg.wait_sent(1)
            assert sent[0]["chat_id"] == "1001"
            assert sent[0]["text"] == "echo: hello there"
            assert "reply_parameters" not in sent[0]  # a DM is not quoted
            typing = [p for name, p in tg.calls if name == "sendChatAction"]
            assert typing and typing[0]["action"] == "typing" and typing[0]["chat_id"] == "1001"
            offset = home / "channels" / "telegram" / "default" / "offset.json"
            wait_for(lambda: offset.exists() and json.loads(offset.read_text())["offset"] == 2, "offset")
            assert stat.S_IMODE(offset.stat().st_mode) == 0o600
            assert stat.S_IMODE(offset.parent.stat().st_mode) == 0o700
        finally:
            gateway.stop()
        assert TOKEN not in gateway.log()
        assert "Traceback" not in gateway.log()


def test_in_a_group_only_a_mention_or_a_reply_is_answered_and_it_is_quoted(tmp_path: Path) -> None:
    home = tmp_path / "h"
    with fakes() as (model, tg):
        telegram_config(home, model, tg, dmPolicy="open", groupAllowFrom=["-500"])
        gateway = start(home)
        try:
            tg.group(-500, 1001, "just chatting among ourselves")
            tg.group(-600, 1001, "@claw_bot a group not allowed")
            tg.group(-500, 1002, "@claw_bot what time is it")
            sent = tg.wait_sent(1)
            assert sent[0]["chat_id"] == "-500"
            assert sent[0]["text"] == "echo: [1002] what time is it"
            assert sent[0]["reply_parameters"]["message_id"] == 10_003  # quotes the message it answers
            tg.dm(1001, "done")  # a later message: the ignored ones were not queued before it
            tg.wait_sent(2)
            assert len(tg.sent) == 2
            prompts = json.dumps(chat_requests(model))
            assert "among ourselves" not in prompts and "not allowed" not in prompts
        finally:
            gateway.stop()


def test_group_with_require_mention_false_answers_every_message(tmp_path: Path) -> None:
    home = tmp_path / "h"
    with fakes() as (model, tg):
        groups = {"-500": {"requireMention": False}}
        telegram_config(home, model, tg, groupPolicy="open", groups=groups)
        gateway = start(home)
        try:
            tg.group(-500, 1001, "no mention here")
            assert tg.wait_sent(1)[0]["text"] == "echo: [1001] no mention here"
            tg.group(-500, 1002, "and I speak too")
            tg.wait_sent(2)
        finally:
            gateway.stop()
        # each speaker's words are stored as theirs, in the group's one session
        [path] = home.glob("agents/main/sessions/*/messages.jsonl")
        users = [json.loads(line) for line in path.read_text().splitlines()]
        speakers = {m["content"]: m.get("userId") for m in users if m["role"] == "user"}
        assert speakers == {"no mention here": "telegram:1001", "and I speak too": "telegram:1002"}


def test_429_502_and_a_dropped_connection_are_retried(shared: Shared) -> None:
    tg = shared.tg
    tg.fail_next("sendMessage", 429, retry_after=1)
    tg.fail_next("sendMessage", 502)
    tg.drop_next("sendMessage")
    tg.dm(2001, "still there?")
    sent = tg.wait_sent(1)
    assert [m["text"] for m in sent] == ["echo: still there?"]
    attempts = [p for name, p in tg.calls if name == "sendMessage"]
    assert len(attempts) == 4
    log = shared.log()
    assert "Traceback" not in log
    assert sum("sendMessage failed" in line for line in log.splitlines()) == 2  # 502 and the drop


def test_a_long_reply_is_split_below_the_limit_without_cutting_a_code_block(shared: Shared) -> None:
    code = "```python\n" + "\n".join(f"x{i} = {i}" for i in range(300)) + "\n```"
    prose = " ".join(f"Sentence number {i} is here." for i in range(110))
    reply = f"{prose}\n\n{code}\n\n{prose}"
    assert 8_500 < len(reply) < 9_500
    tg = shared.tg
    shared.model.respond_with(lambda body: reply)
    tg.dm(2002, "write a lot")
    sent = wait_for(lambda: tg.sent if len(tg.sent) >= 3 else None, "three parts")
    parts = [m["text"] for m in sent]
    assert len(parts) == 3
    assert all(len(p) < 4096 for p in parts)
    for part in parts:  # every part opens as many blocks as it closes
        assert part.count("<pre>") == part.count("</pre>")
    assert sum(p.count("x299 = 299") for p in parts) == 1


def test_rejected_html_falls_back_to_plain_text(shared: Shared) -> None:
    tg = shared.tg
    shared.model.respond_with(lambda body: "use **bold** and `code`")
    tg.reject_html_next()
    tg.dm(2003, "format it")
    sent = tg.wait_sent(1)
    assert sent[0]["text"] == "use **bold** and `code`"
    assert "parse_mode" not in sent[0]
    assert "sending the part as plain text" in shared.log()


def test_a_second_poller_409_is_one_error_line(tmp_path: Path) -> None:
    home = tmp_path / "h"
    with fakes() as (model, tg):
        tg.conflict = True
        telegram_config(home, model, tg, dmPolicy="open")
        gateway = start(home)
        try:
            wait_for(lambda: "409 Conflict" in gateway.log(), "the conflict logged")
        finally:
            gateway.stop()
        lines = [line for line in gateway.log().splitlines() if "Conflict" in line]
        assert len(lines) == 1
        assert "another process polls this bot token" in lines[0]
        assert "Traceback" not in gateway.log()


def test_channels_status_shows_the_running_channel_and_never_the_token(tmp_path: Path) -> None:
    home = tmp_path / "h"
    with fakes() as (model, tg):
        telegram_config(home, model, tg, dmPolicy="open")
        gateway = start(home)
        try:
            tg.dm(1001, "hi")
            tg.wait_sent(1)

            def status() -> dict[str, object] | None:
                rows = json.loads(run_cli(home, "channels", "status", "--json").stdout)["channels"]
                row = next(r for r in rows if r["channel"] == "telegram")
                return row if row["connected"] and row["lastOutbound"] and row["offset"] == 2 else None

            row = wait_for(status, "status with the reply")
            assert row["mode"] == "polling" and row["pendingSends"] == 0 and row["lastError"] is None
            listed = run_cli(home, "channels", "list", env={"TELEGRAM_BOT_TOKEN": TOKEN})
            assert "tokenSet=True" in listed.stdout
            for out in (listed.stdout, run_cli(home, "channels", "status").stdout):
                assert TOKEN not in out
        finally:
            gateway.stop()
        stopped = json.loads(run_cli(home, "channels", "status", "--json").stdout)
        assert stopped["gateway"] is None and stopped["channels"][0]["offset"] == 2


def _post_update(gateway_http: str, update: object, secret: str | None) -> int:
    import urllib.error
    import urllib.request

    data = update if isinstance(update, bytes) else json.dumps(update).encode()
    headers = {"Content-Type": "application/json"}
    if secret is not None:
        headers["X-Telegram-Bot-Api-Secret-Token"] = secret
    request = urllib.request.Request(f"{gateway_http}/channels/telegram/events", data, headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return int(reply.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def test_webhook_mode_checks_the_secret_and_answers_each_update_once(tmp_path: Path) -> None:
    home = tmp_path / "h"
    secret = "a-long-random-webhook-secret"
    with fakes() as (model, tg):
        telegram_config(
            home,
            model,
            tg,
            dmPolicy="open",
            mode="webhook",
            webhookUrl="https://bot.example/hook",
            webhookSecret=secret,
        )
        gateway = start(home)
        try:
            wait_for(lambda: any(name == "setWebhook" for name, _ in tg.calls), "setWebhook")
            set_call = next(p for name, p in tg.calls if name == "setWebhook")
            assert set_call["secret_token"] == secret and set_call["url"] == "https://bot.example/hook"
            message = {
                "message_id": 5,
                "date": 1,
                "chat": {"id": 77, "type": "private"},
                "from": {"id": 77, "is_bot": False, "first_name": "W"},
                "text": "via webhook",
            }
            update = {"update_id": 9001, "message": message}
            assert _post_update(gateway.http, update, "wrong") == 401
            assert _post_update(gateway.http, update, None) == 401
            assert _post_update(gateway.http, b"not json", secret) == 400
            assert _post_update(gateway.http, update, secret) == 200
            assert _post_update(gateway.http, update, secret) == 200  # Telegram redelivers: answered once
            tg.wait_sent(1)
            assert (
                _post_update(
                    gateway.http, {**update, "update_id": 9002, "message": {**message, "text": "2nd"}}, secret
                )
                == 200
            )
            tg.wait_sent(2)
            assert [m["text"] for m in tg.sent] == ["echo: via webhook", "echo: 2nd"]
            assert not any(name == "getUpdates" for name, _ in tg.calls)
        finally:
            gateway.stop()
        log = gateway.log()
        assert log.count("webhook request refused") == 2 and "webhook body refused" in log
        assert "Traceback" not in log


def test_updates_with_nothing_to_answer_are_skipped_and_the_offset_moves_past_them(tmp_path: Path) -> None:
    home = tmp_path / "h"
    with fakes() as (model, tg):
        telegram_config(home, model, tg, dmPolicy="open")
        gateway = start(home)
        try:
            bot = {"id": 5, "is_bot": True, "first_name": "other bot"}
            tg.push({"chat": {"id": 1001, "type": "private"}, "from": bot, "text": "I am a bot"})
            tg.dm(
                1001,
                "",
                sticker={
                    "file_id": "S",
                    "file_unique_id": "S",
                    "width": 1,
                    "height": 1,
                    "is_animated": False,
                    "is_video": False,
                    "type": "regular",
                },
            )
            tg.dm(1001, "   ")
            tg.dm(1001, "a real question")
            assert [m["text"] for m in tg.wait_sent(1)] == ["echo: a real question"]
            wait_for(lambda: tg.acknowledged() == 5, "the offset past all four updates")
            assert len(chat_requests(model)) >= 1 and "I am a bot" not in json.dumps(chat_requests(model))
        finally:
            gateway.stop()
        assert "Traceback" not in gateway.log()


def test_a_refused_token_is_one_error_line_and_the_gateway_keeps_serving(tmp_path: Path) -> None:
    home = tmp_path / "h"
    with fakes() as (model, tg):
        telegram_config(home, model, tg, dmPolicy="open")
        gateway = start(home, token="999:not-the-right-token")
        try:
            wait_for(lambda: "bot token was refused" in gateway.log(), "the refusal logged")
            rows = json.loads(run_cli(home, "channels", "status", "--json").stdout)["channels"]
            assert rows[0]["connected"] is False and "InvalidToken" in rows[0]["lastError"]
        finally:
            gateway.stop()
        log = gateway.log()
        assert sum("token was refused" in line for line in log.splitlines()) == 1
        assert "not-the-right-token" not in log and "Traceback" not in log


def test_a_malformed_update_is_skipped_in_one_line_and_the_rest_answered(tmp_path: Path) -> None:
    home = tmp_path / "h"
    with fakes() as (model, tg):
        telegram_config(home, model, tg, dmPolicy="open")
        gateway = start(home)
        try:
            tg.dm(1001, "first")
            tg.wait_sent(1)
            with tg._cond:  # three updates in one batch, the middle one without a chat
                tg.push(
                    {
                        "chat": {"id": 1001, "type": "private"},
                        "from": {"id": 1001, "is_bot": False, "first_name": "a"},
                        "text": "before the bad one",
                    }
                )
                tg.push({"from": {"id": 1001, "is_bot": False, "first_name": "a"}, "text": "no chat"})
                tg.push(
                    {
                        "chat": {"id": 1001, "type": "private"},
                        "from": {"id": 1001, "is_bot": False, "first_name": "a"},
                        "text": "after the bad one",
                    }
                )
            wait_for(lambda: len(tg.sent) >= 3, "the two good updates answered")
            assert tg.texts_to(1001) == ["echo: first", "echo: before the bad one", "echo: after the bad one"]
            wait_for(lambda: tg.acknowledged() == 5, "the offset past the bad update")
        finally:
            gateway.stop()
        log = gateway.log()
        assert sum("update 3 is malformed" in line for line in log.splitlines()) == 1
        assert "Traceback" not in log


def test_an_update_the_library_cannot_parse_is_skipped_in_one_line(tmp_path: Path) -> None:
    home = tmp_path / "h"
    with fakes() as (model, tg):
        telegram_config(home, model, tg, dmPolicy="open")
        gateway = start(home)
        try:
            with tg._cond:
                tg.updates.append(
                    {"update_id": 1, "message": {"message_id": "x", "date": "not a date", "chat": 7}}
                )
                tg._next_update = 2
            tg.dm(1001, "after garbage")
            assert tg.wait_sent(1)[0]["text"] == "echo: after garbage"
        finally:
            gateway.stop()
        log = gateway.log()
        assert sum("update 1 is malformed" in line for line in log.splitlines()) == 1
        assert "Traceback" not in log


def test_a_send_that_keeps_failing_is_recorded_shown_and_sent_after_a_restart(tmp_path: Path) -> None:
    home = tmp_path / "h"
    with fakes() as (model, tg):
        telegram_config(home, model, tg, dmPolicy="open")  # sendRetries 3: four attempts
        for _ in range(4):
            tg.fail_next("sendMessage", 502)
        gateway = start(home)
        try:
            tg.dm(1001, "will this arrive")

            def failed() -> dict[str, object] | None:
                rows = json.loads(run_cli(home, "channels", "status", "--json").stdout)["channels"]
                return rows[0] if rows[0]["pendingSends"] == 1 and rows[0]["failedSends"] == 1 else None

            row = wait_for(failed, "the failed send shown")
            assert "gave up" in str(row["lastError"])
            tg.dm(1002, "the gateway still works")
            wait_for(lambda: tg.texts_to(1002), "another chat answered")
            assert tg.texts_to(1001) == []
        finally:
            gateway.stop()
        assert "Traceback" not in gateway.log()
        calls_before = len(chat_requests(model))
        gateway = start(home)
        try:
            wait_for(lambda: tg.texts_to(1001) == ["echo: will this arrive"], "sent at the next start")
        finally:
            gateway.stop()
        assert len(chat_requests(model)) == calls_before  # the recorded reply was sent, not asked again


def test_a_chat_that_blocked_the_bot_is_recorded_and_not_retried(shared: Shared) -> None:
    tg = shared.tg
    tg.fail_next("sendMessage", 403)
    tg.dm(2004, "then I blocked you")
    wait_for(lambda: "sendMessage refused (Forbidden" in shared.log(), "the refusal logged")
    tg.dm(2005, "next")
    wait_for(lambda: tg.texts_to(2005), "the next chat answered")
    attempts = [p for name, p in tg.calls if name == "sendMessage" and p["chat_id"] == "2004"]
    assert len(attempts) == 1
    assert "Traceback" not in shared.log()


def test_an_enabled_channel_without_a_token_is_one_line_and_shown_in_status(tmp_path: Path) -> None:
    from tests.gateway_helpers import start_gateway

    home = tmp_path / "h"
    with fakes() as (model, tg):
        telegram_config(home, model, tg)
        gateway = start_gateway(home, env={"TELEGRAM_BOT_TOKEN": ""})
        try:
            rows = json.loads(
                run_cli(home, "channels", "status", "--json", env={"TELEGRAM_BOT_TOKEN": ""}).stdout
            )
            assert rows["channels"][0]["connected"] is False
            assert "has no botToken" in rows["channels"][0]["lastError"]
        finally:
            gateway.stop()
        assert sum("has no botToken" in line for line in gateway.log().splitlines()) == 1
        assert "Traceback" not in gateway.log()
