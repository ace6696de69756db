"""A test plugin whose event hooks sleep past any short timeout (tests give it hookTimeoutSeconds 0.2)."""

from __future__ import annotations

import threading
from typing import Any

from openclaw_cli.plugins import hookimpl

WAKE = threading.Event()  # set by a test to let the sleeping calls end
SLEEP = 60.0  # released by WAKE at the end of the test; long enough for a slow machine


@hookimpl
def message_received(ctx: Any) -> None:
    WAKE.wait(SLEEP)


@hookimpl
def message_sending(ctx: Any) -> None:
    WAKE.wait(SLEEP)


@hookimpl
def before_prompt_build(ctx: Any) -> None:
    WAKE.wait(SLEEP)


@hookimpl
def turn_end(ctx: Any) -> None:
    WAKE.wait(SLEEP)
