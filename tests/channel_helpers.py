"""Shared setup of the channel tests: a fake model, a fake Telegram, a gateway process configured for them."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.fake_openai import FakeOpenAI
from tests.fake_telegram import TOKEN, FakeTelegram
from tests.gateway_helpers import Gateway, echo_last_user, start_gateway, write_config


@contextmanager
def fakes() -> Iterator[tuple[FakeOpenAI, FakeTelegram]]:
    model = FakeOpenAI().start()
    model.respond_with(echo_last_user)
    telegram = FakeTelegram().start()
    try:
        yield model, telegram
    finally:
        telegram.stop()
        model.stop()


def fake_embeddings(model: FakeOpenAI) -> dict[str, Any]:
    """The `memory` section that takes embeddings from the fake model server: a gateway then loads no
    local ONNX model at start (seconds per gateway under load). No channel test checks local embeddings."""
    embedding = {
        "provider": "litellm",
        "model": "openai/text-embedding-3-small",
        "apiBase": model.url,
        "dimensions": 64,
        "maxRetries": 0,
    }
    return {"embedding": embedding}


def telegram_config(home: Path, model: FakeOpenAI, telegram: FakeTelegram, **telegram_keys: Any) -> None:
    section = {
        "enabled": True,
        "apiBase": telegram.api_base,
        "pollTimeoutSeconds": 1,
        **telegram_keys,
    }
    write_config(
        home,
        model,
        channels={"telegram": section, "sendRetries": 3},
        memory=fake_embeddings(model),
        session={"reset": {"atHour": None}, "dmScope": "per-channel-peer"},
    )


def start(home: Path, *, token: str = TOKEN) -> Gateway:
    return start_gateway(home, env={"TELEGRAM_BOT_TOKEN": token})


def chat_requests(model: FakeOpenAI) -> list[dict[str, Any]]:
    """The agent's chat requests (not query expansions or extraction)."""
    return [r.body for r in model.requests_to("/chat/completions")]


def wait_for(check: Callable[[], Any], what: str, deadline: float = 30.0) -> Any:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")
