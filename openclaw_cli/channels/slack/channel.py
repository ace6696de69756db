"""The Slack channel: the Events API pushed to POST /channels/slack/events, replies with slack-sdk's WebClient.

Telegram pulls, Slack pushes: this channel has no loop of its own. Each request is verified (signing secret,
a 5-minute window against replays), a `url_verification` challenge is answered, the bot's own messages and
edits are ignored, and a retried event (X-Slack-Retry-Num) already journaled is acknowledged without a
second turn. Slack wants an answer within 3 s: the event is journaled and queued, and the request answered
at once; the reply is posted later, in the thread of the message in channels, as a plain message in DMs.
WebClient is synchronous (urllib), so its calls run in a worker thread.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
import urllib.error
from typing import TYPE_CHECKING, Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.signature import SignatureVerifier

from openclaw_cli.channels.base import Inbound, PeerKind, PermanentSendError, SendError, Sink, Target
from openclaw_cli.channels.chunking import split_text

if TYPE_CHECKING:
    from openclaw_cli.channels.settings import SlackSettings

log = logging.getLogger("openclaw.channels")
LIMIT = 3900  # Slack truncates messages past 40,000 characters but advises 4,000
KINDS: dict[str, PeerKind] = {"im": "direct", "mpim": "group", "group": "group", "channel": "channel"}
Answer = tuple[int, bytes, dict[str, str]]


def _now() -> str:
    return dt.datetime.now().astimezone().isoformat(timespec="seconds")


def _json(status: int, value: Any) -> Answer:
    return status, json.dumps(value).encode(), {"content-type": "application/json"}


class SlackChannel:
    name = "slack"
    account_id = "default"

    def __init__(self, section: SlackSettings, token: str, retries: int = 5) -> None:
        self.section = section
        self.retries = retries
        self.client = WebClient(token=token, base_url=section.api_base.rstrip("/") + "/", timeout=15)
        self.verifier = SignatureVerifier(section.signing_secret or "")
        self.sink: Sink | None = None
        self.bot_user: str | None = None
        self.connected = False
        self.last_inbound: str | None = None
        self.last_outbound: str | None = None
        self.last_error: str | None = None

    def _error(self, text: str) -> None:
        self.last_error = f"{_now()} {text}"
        log.error("slack: %s", text)

    async def start(self, sink: Sink) -> None:
        self.sink = sink
        if not self.section.signing_secret:
            self._error("no signingSecret: every event is refused until channels.slack.signingSecret is set")
        try:
            answer = await asyncio.to_thread(self.client.auth_test)
            self.bot_user = str(answer.get("user_id") or "") or None
            self.connected = True
        except (SlackApiError, OSError, urllib.error.URLError) as exc:
            self._error(
                f"auth.test failed ({type(exc).__name__}); the bot's own messages are told apart by bot_id only"
            )

    async def stop(self) -> None:
        self.connected = False

    # ------------------------------------------------------------------ inbound

    async def http_event(self, body: bytes, headers: dict[str, str]) -> Answer:
        stamp = headers.get("x-slack-request-timestamp", "")
        signature = headers.get("x-slack-signature", "")
        if not self.section.signing_secret or not stamp.isdigit():
            log.warning("slack: event refused: no signing secret or timestamp")
            return _json(401, {"error": "unsigned"})
        if not self.verifier.is_valid(body, stamp, signature):
            log.warning("slack: event refused: bad signature or a timestamp outside the 5-minute window")
            return _json(401, {"error": "invalid signature"})
        try:
            payload = json.loads(body)
        except ValueError:
            log.warning("slack: event refused: the body is not JSON")
            return _json(400, {"error": "not json"})
        if not isinstance(payload, dict):
            log.warning("slack: event refused: the body is not a JSON object")
            return _json(400, {"error": "not an object"})
        if payload.get("type") == "url_verification":
            return _json(200, {"challenge": str(payload.get("challenge", ""))})
        message = self._inbound(payload)
        if message is None:
            return _json(200, {"ok": True})
        assert self.sink is not None
        if headers.get("x-slack-retry-num") and self.sink.seen(self, message.event_id):
            log.info(
                "slack: retry %s of event %s already handled", headers["x-slack-retry-num"], message.event_id
            )
            return _json(200, {"ok": True})
        self.last_inbound = _now()
        await self.sink.deliver(self, message)
        return _json(200, {"ok": True})

    def _inbound(self, payload: dict[str, Any]) -> Inbound | None:
        event = payload.get("event")
        if payload.get("type") != "event_callback" or not isinstance(event, dict):
            return None
        if event.get("type") not in ("message", "app_mention") or event.get("subtype") or event.get("bot_id"):
            return None  # edits, joins, and every bot's messages (this one's included)
        user, channel, text = event.get("user"), event.get("channel"), event.get("text")
        if not isinstance(user, str) or not isinstance(channel, str) or not isinstance(text, str):
            return None
        if user == self.bot_user:
            return None
        kind = KINDS.get(
            str(event.get("channel_type") or ("channel" if event["type"] == "app_mention" else ""))
        )
        if kind is None:
            return None
        mention = f"<@{self.bot_user}>" if self.bot_user else None
        addressed = kind == "direct" or event["type"] == "app_mention" or bool(event.get("thread_ts"))
        addressed = addressed or bool(mention and mention in text)
        if mention:
            text = text.replace(mention, "").strip()
        if not text.strip():
            return None
        thread = None if kind == "direct" else str(event.get("thread_ts") or event.get("ts") or "") or None
        # A message in a channel arrives twice (message and app_mention): one id for both, from its ts.
        event_id = f"{channel}:{event.get('ts')}" if event.get("ts") else str(payload.get("event_id"))
        return Inbound(
            channel="slack",
            account_id=self.account_id,
            event_id=event_id,
            peer_kind=kind,
            peer_id=user if kind == "direct" else channel,
            sender=user,
            text=text,
            target=Target(channel, None, thread),
            addressed=addressed,
        )

    # ------------------------------------------------------------------ outbound

    def split(self, text: str) -> list[str]:
        return split_text(text, LIMIT)

    async def typing(self, target: Target) -> None:
        return None  # the Events API bot has no typing indicator

    async def send(self, target: Target, text: str) -> str | None:
        backoff = 0.5
        last: Exception | None = None
        for _ in range(self.retries + 1):
            try:
                answer = await asyncio.to_thread(
                    self.client.chat_postMessage, channel=target.chat_id, text=text, thread_ts=target.thread
                )
                self.last_outbound = _now()
                return str(answer.get("ts"))
            except SlackApiError as exc:
                status = exc.response.status_code
                if status == 429:
                    last = exc
                    await asyncio.sleep(float(exc.response.headers.get("Retry-After", "1") or 1))
                    continue
                if status < 500:
                    self._error(f"chat.postMessage refused ({exc.response.get('error')})")
                    raise PermanentSendError(str(exc.response.get("error"))) from exc
                last = exc
            except (OSError, urllib.error.URLError) as exc:
                last = exc
            self._error(f"chat.postMessage failed ({type(last).__name__}); retrying in {backoff:.1f} s")
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 30.0)
        raise SendError(f"chat.postMessage gave up: {type(last).__name__}")

    def status(self) -> dict[str, Any]:
        return {
            "connected": self.connected,
            "mode": "events",
            "lastInbound": self.last_inbound,
            "lastOutbound": self.last_outbound,
            "lastError": self.last_error,
        }
