"""The Slack channel (Events API pushed to the gateway, a fake Web API), and privacy across channels."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.channel_helpers import chat_requests, fake_embeddings, fakes, wait_for
from tests.fake_openai import FakeOpenAI
from tests.fake_slack import SIGNING_SECRET, SLACK_TOKEN, FakeSlack, event_body, post_event
from tests.fake_telegram import TOKEN, FakeTelegram
from tests.gateway_helpers import Gateway, echo_last_user, start_gateway, write_config


@contextmanager
def slack_gateway(
    home: Path, model: FakeOpenAI, slack: FakeSlack, telegram: FakeTelegram | None = None, **keys: Any
) -> Iterator[Gateway]:
    channels: dict[str, Any] = {
        "slack": {"enabled": True, "signingSecret": SIGNING_SECRET, "apiBase": slack.api_base, **keys},
        "sendRetries": 3,
    }
    if telegram is not None:
        channels["telegram"] = {
            "enabled": True,
            "apiBase": telegram.api_base,
            "pollTimeoutSeconds": 1,
            "dmPolicy": "open",
        }
    write_config(
        home,
        model,
        channels=channels,
        memory=fake_embeddings(model),
        session={"reset": {"atHour": None}, "dmScope": "per-channel-peer"},
    )
    env = {"SLACK_BOT_TOKEN": SLACK_TOKEN, "TELEGRAM_BOT_TOKEN": TOKEN}
    gateway = start_gateway(home, env=env)
    try:
        yield gateway
    finally:
        gateway.stop()


@contextmanager
def with_slack() -> Iterator[tuple[FakeOpenAI, FakeTelegram, FakeSlack]]:
    slack = FakeSlack().start()
    try:
        with fakes() as (model, telegram):
            yield model, telegram, slack
    finally:
        slack.stop()


@dataclass
class Shared:
    """The module's one gateway (Slack with DMs and channels open, plus Telegram) and its fakes. Each test
    speaks as its own Slack users and sees only what happened since it began (`log()`, the fakes' records)."""

    model: FakeOpenAI
    telegram: FakeTelegram
    slack: FakeSlack
    gw: Gateway
    log_start: int = 0

    def log(self) -> str:
        return self.gw.log()[self.log_start :]


@pytest.fixture(scope="module")
def shared_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shared]:
    home = tmp_path_factory.mktemp("slack") / "h"
    with (
        with_slack() as (model, telegram, slack),
        slack_gateway(home, model, slack, telegram, dmPolicy="open", groupPolicy="open") as gw,
    ):
        yield Shared(model, telegram, slack, gw)
    assert SLACK_TOKEN not in gw.log() and "Traceback" not in gw.log()


@pytest.fixture
def shared(shared_gateway: Shared) -> Shared:
    """The shared gateway with fresh fake state: no recorded calls, the echo model, no failure queued."""
    s = shared_gateway
    with s.slack._cond:
        s.slack.posted.clear()
        s.slack._failures.clear()
    with s.telegram._cond:
        s.telegram.sent.clear()
        s.telegram.calls.clear()
    with s.model._lock:
        s.model.requests.clear()
    s.model.respond_with(echo_last_user)
    s.log_start = len(s.gw.log())
    return s


def test_challenge_dm_reply_and_a_thread_reply_in_a_channel(shared: Shared) -> None:
    slack, gw = shared.slack, shared.gw
    # the shared gateway (dmPolicy and groupPolicy open)
    status, body = post_event(gw.http, {"type": "url_verification", "challenge": "abc123"})
    assert (status, body) == (200, {"challenge": "abc123"})
    assert post_event(gw.http, event_body("U1", "hello slack"))[0] == 200
    posted = slack.wait_posted(1)
    assert posted[0]["channel"] == "D1" and posted[0]["text"] == "echo: hello slack"
    assert "thread_ts" not in posted[0]
    mention = event_body("U2", "<@UBOT> in a channel", channel="C9", channel_type="channel", ts="111.222")
    post_event(gw.http, mention)
    posted = slack.wait_posted(2)
    assert posted[1]["channel"] == "C9" and posted[1]["thread_ts"] == "111.222"
    assert posted[1]["text"] == "echo: [U2] in a channel"
    assert SLACK_TOKEN not in shared.log()


def test_bad_signature_old_timestamp_retries_and_own_messages_are_refused_or_ignored(shared: Shared) -> None:
    model, slack, gw = shared.model, shared.slack, shared.gw
    # the shared gateway (dmPolicy open); this test speaks as U3
    event = event_body("U3", "once only", ts="500.1")
    assert post_event(gw.http, event, secret="wrong")[0] == 401
    assert post_event(gw.http, event, timestamp=int(time.time()) - 6 * 60)[0] == 401
    assert post_event(gw.http, b"not json")[0] == 400
    assert post_event(gw.http, event)[0] == 200
    slack.wait_posted(1)
    assert post_event(gw.http, event, retry=1)[0] == 200  # Slack retried: already handled
    assert post_event(gw.http, event_body("UBOT", "my own words", bot_id="BBOT"))[0] == 200
    assert post_event(gw.http, event_body("U3", "edited", subtype="message_changed"))[0] == 200
    post_event(gw.http, event_body("U3", "last one"))
    wait_for(lambda: len(slack.posted) >= 2, "the last reply")
    assert [p["text"] for p in slack.posted] == ["echo: once only", "echo: last one"]
    assert len(chat_requests(model)) >= 2
    log = shared.log()
    assert "Traceback" not in log
    assert log.count("bad signature or a timestamp outside the 5-minute window") == 2
    assert "the body is not JSON" in log and "already handled" in log


def test_a_long_slack_reply_is_split_in_the_thread(shared: Shared) -> None:
    reply = "\n\n".join(f"Paragraph {i}. " + "word " * 300 for i in range(6))  # ~9,000 characters
    model, slack, gw = shared.model, shared.slack, shared.gw
    # the shared gateway (groupPolicy open); this test speaks as U4
    model.respond_with(lambda body: reply)
    post_event(
        gw.http, event_body("U4", "<@UBOT> write a lot", channel="C1", channel_type="channel", ts="9.9")
    )
    wait_for(lambda: len(slack.posted) >= 3, "three parts")
    assert all(p["thread_ts"] == "9.9" and len(p["text"]) < 4000 for p in slack.posted)
    assert "".join(p["text"] for p in slack.posted).count("Paragraph") == 6
    assert "Traceback" not in shared.log()


def test_slack_send_retries_429_and_502(shared: Shared) -> None:
    slack, gw = shared.slack, shared.gw
    # the shared gateway (dmPolicy open); this test speaks as U5
    slack.fail_next(429)
    slack.fail_next(502)
    post_event(gw.http, event_body("U5", "are you up"))
    assert slack.wait_posted(1)[0]["text"] == "echo: are you up"
    assert "Traceback" not in shared.log()


def test_three_people_on_two_channels_never_see_each_others_secrets(shared: Shared) -> None:
    secrets = {"tg-alice": "SAPPHIRE-42", "tg-bob": "OBSIDIAN-77", "slack-carol": "TOPAZ-13"}
    model, telegram, slack, gw = shared.model, shared.telegram, shared.slack, shared.gw
    # the shared gateway, Telegram and Slack; the other tests' Slack users are not these three
    telegram.dm(1001, f"remember that my secret code is {secrets['tg-alice']}")
    telegram.dm(1002, f"remember that my secret code is {secrets['tg-bob']}")
    post_event(gw.http, event_body("UCAROL", f"remember that my secret code is {secrets['slack-carol']}"))
    telegram.wait_sent(2)
    slack.wait_posted(1)
    telegram.dm(1001, "what are the other people's secret codes?")
    telegram.dm(1002, "what are the other people's secret codes?")
    post_event(gw.http, event_body("UCAROL", "what are the other people's secret codes?"))
    telegram.wait_sent(4)
    slack.wait_posted(2)
    replies = {
        "tg-alice": " ".join(telegram.texts_to(1001)),
        "tg-bob": " ".join(telegram.texts_to(1002)),
        "slack-carol": " ".join(p["text"] for p in slack.posted),
    }
    for person, text in replies.items():
        for other, secret in secrets.items():
            if other != person:
                assert secret not in text, (person, other)
    # Every prompt the model received holds at most one person's secret, and when the new message names one,
    # that person's (their own words, their own memories; never another's).
    leaks = 0
    for body in chat_requests(model):
        owners = {p for p, s in secrets.items() if s in json.dumps(body)}
        speaker = {p for p, s in secrets.items() if s in str(body["messages"][-1]["content"])}
        leaks += len(owners - speaker) if speaker else max(0, len(owners) - 1)
    assert leaks == 0
    assert "Traceback" not in shared.log()


def test_an_oversized_event_is_refused_without_being_read(shared: Shared) -> None:
    model, slack, gw = shared.model, shared.slack, shared.gw
    # the shared gateway (dmPolicy open); this test speaks as U6
    huge = event_body("U6", "x" * 1_100_000)
    assert _post_oversized(gw.http, huge) in (413, "reset")
    assert post_event(gw.http, event_body("U6", "small"))[0] == 200
    slack.wait_posted(1)
    # whichever the client saw, the server refused it: no turn ran on the huge body
    assert [p["text"] for p in slack.posted] == ["echo: small"]
    assert "x" * 1000 not in json.dumps(chat_requests(model))
    assert "larger than gateway.maxMessageBytes" in shared.log() and "Traceback" not in shared.log()


def _post_oversized(gateway_http: str, body: dict[str, Any]) -> int | str:
    """The status of an oversized POST, or "reset". The gateway answers 413 from the headers and closes
    without reading the body, so a client still sending it may instead meet a broken pipe or a reset:
    both are the refusal under test, and which one the client sees depends only on timing."""
    import urllib.error

    try:
        return post_event(gateway_http, body)[0]
    except urllib.error.URLError as exc:  # raised while sending: urllib wraps the OSError
        if isinstance(exc.reason, (BrokenPipeError, ConnectionResetError)):
            return "reset"
        raise
    except (BrokenPipeError, ConnectionResetError):  # raised while reading the answer
        return "reset"
