"""The Telegram channel (python-telegram-bot v22, asyncio): long polling, sending, typing.

Requests go to `{apiBase}/bot{token}/{method}` and files to `{apiBase}/file/bot{token}/{path}`, so a local
Bot API server (or the tests' fake) stands in for api.telegram.org. The token never appears in a log line:
PTB's own loggers are kept at WARNING and every error is logged by its class and message only.

Polling: getUpdates with the persisted offset; each update is handed to the sink, which returns once the
message is in the journal, and only then does the offset move past it (saved after each batch, before the
next getUpdates acknowledges the batch to Telegram). An update seen again after a crash is recognised by
its id in the journal. 409 Conflict (another poller, or a webhook) is one error line, and polling retries.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import hmac
import json
import logging
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from telegram import Bot, ReplyParameters, Update
from telegram.constants import ChatAction, ParseMode
from telegram.error import (
    BadRequest,
    Conflict,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TelegramError,
)
from telegram.request import HTTPXRequest

from openclaw_cli.channels.base import PermanentSendError, SendError, Sink, Target
from openclaw_cli.channels.chunking import split_text
from openclaw_cli.channels.telegram.convert import CHANNEL, event_id, to_html, to_inbound

if TYPE_CHECKING:
    from openclaw_cli.channels.journal import ChannelJournal
    from openclaw_cli.channels.settings import TelegramSettings
    from openclaw_cli.config.loading import Settings

log = logging.getLogger("openclaw.channels")
LIMIT = 4000  # below Telegram's 4,096, leaving room for the HTML markup the parts gain
MAX_BACKOFF = 30.0
TYPING_SLOTS = 8  # typing indicators in flight at once: they share the connection pool with the replies
# httpx logs request URLs at INFO, and they hold the token. PTB logs what it cannot parse with a traceback
# and the update's text (a person's words): every error is said here instead, in one line.
for _noisy in ("httpx", "httpcore"):
    logging.getLogger(_noisy).setLevel(logging.WARNING)
logging.getLogger("telegram").setLevel(logging.CRITICAL + 1)


def _seconds(value: int | dt.timedelta) -> float:
    return value.total_seconds() if isinstance(value, dt.timedelta) else float(value)


def _now() -> str:
    return dt.datetime.now().astimezone().isoformat(timespec="seconds")


class TelegramChannel:
    name = CHANNEL
    account_id = "default"

    def __init__(
        self,
        section: TelegramSettings,
        token: str,
        journal: ChannelJournal,
        media_root: Path,
        settings: Settings,
        retries: int = 5,
    ) -> None:
        self.section = section
        self.journal = journal
        self.media_root = media_root
        self.media_settings = settings.media
        self.retries = retries
        base = section.api_base.rstrip("/")
        timeout = float(section.poll_timeout_seconds)
        self.bot = Bot(
            token,
            base_url=f"{base}/bot",
            base_file_url=f"{base}/file/bot",
            # Waiting for a free connection is not a failure: a burst of replies queues for the pool.
            request=HTTPXRequest(connection_pool_size=64, read_timeout=30.0, pool_timeout=60.0),
            get_updates_request=HTTPXRequest(connection_pool_size=2, read_timeout=timeout + 10.0),
        )
        self.sink: Sink | None = None
        self._typing_slots = asyncio.Semaphore(TYPING_SLOTS)
        self.task: asyncio.Task[None] | None = None
        self.connected = False
        self.last_inbound: str | None = None
        self.last_outbound: str | None = None
        self.last_error: str | None = None

    # ------------------------------------------------------------------ life cycle

    async def start(self, sink: Sink) -> None:
        self.sink = sink
        if self.section.mode == "polling":
            self.task = asyncio.get_running_loop().create_task(self._poll_forever())
        else:
            self.task = asyncio.get_running_loop().create_task(self._set_webhook())

    async def _set_webhook(self) -> None:
        """Webhook mode: Telegram posts updates to webhookUrl (this gateway's /channels/telegram/events)."""
        if not self.section.webhook_url or not self.section.webhook_secret:
            self._error("mode webhook needs webhookUrl and webhookSecret; the channel stays off")
            return
        try:
            await self._connect()
            await self.bot.set_webhook(
                self.section.webhook_url,
                secret_token=self.section.webhook_secret,
                allowed_updates=["message"],
            )
            self.connected = True
        except TelegramError as exc:
            self._error(f"setWebhook failed ({type(exc).__name__}: {exc})")

    async def http_event(self, body: bytes, headers: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
        """One update posted by Telegram: its secret header checked, journaled, then 200 at once (the turn
        runs in the lanes); a redelivered update is recognised by its id."""
        secret = self.section.webhook_secret or ""
        given = headers.get("x-telegram-bot-api-secret-token", "")
        if self.section.mode != "webhook" or not secret or not hmac.compare_digest(given, secret):
            log.warning("telegram: webhook request refused: wrong or missing secret token")
            return 401, b"{}", {"content-type": "application/json"}
        try:
            data = json.loads(body)
            update = Update.de_json(data, self.bot) if isinstance(data, dict) else None
        except (ValueError, TypeError, KeyError) as exc:
            log.warning("telegram: webhook body refused: not an update (%s)", type(exc).__name__)
            return 400, b"{}", {"content-type": "application/json"}
        if update is None:
            log.warning("telegram: webhook body refused: not an update")
            return 400, b"{}", {"content-type": "application/json"}
        await self._handle_one(update)
        return 200, b"{}", {"content-type": "application/json"}

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task
        with contextlib.suppress(Exception):
            await self.bot.shutdown()

    def _error(self, text: str) -> None:
        self.last_error = f"{_now()} {text}"
        log.error("telegram: %s", text)

    async def _connect(self) -> None:
        """getMe (the bot's id and username, for mentions), retried until the API answers."""
        backoff = 1.0
        while True:
            try:
                await self.bot.initialize()
                return
            except InvalidToken:
                self._error(
                    "the bot token was refused (401/404 InvalidToken); check channels.telegram.botToken"
                )
                raise
            except TelegramError as exc:
                self._error(
                    f"cannot reach the Bot API ({type(exc).__name__}: {exc}); retrying in {backoff:.0f} s"
                )
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF)

    async def _poll_forever(self) -> None:
        try:
            await self._connect()
        except InvalidToken:
            return
        offset = self.journal.offset()
        backoff = 1.0
        conflicted = False
        while True:
            try:
                updates = await self.bot.get_updates(
                    offset=offset,
                    timeout=self.section.poll_timeout_seconds,
                    allowed_updates=["message"],
                )
            except Conflict:
                if not conflicted:
                    self._error(
                        "getUpdates refused with 409 Conflict: another process polls this bot token "
                        "(or a webhook is set); retrying every 30 s"
                    )
                conflicted, self.connected = True, False
                await asyncio.sleep(MAX_BACKOFF)
                continue
            except RetryAfter as exc:
                await asyncio.sleep(_seconds(exc.retry_after))
                continue
            except InvalidToken:
                self._error("the bot token was refused (InvalidToken); polling stopped")
                self.connected = False
                return
            except TelegramError as exc:
                self._error(f"getUpdates failed ({type(exc).__name__}: {exc}); retrying in {backoff:.0f} s")
                self.connected = False
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF)
                continue
            except Exception:  # noqa: BLE001 - an update PTB cannot parse: take the batch apart
                try:
                    updates, after = await self._one_by_one(offset)
                    offset = await self._handle(updates, offset)
                except Exception as exc:  # noqa: BLE001 - polling must go on
                    self._error(f"getUpdates failed ({type(exc).__name__}); retrying in {backoff:.0f} s")
                    await asyncio.sleep(backoff)
                    backoff = min(backoff * 2, MAX_BACKOFF)
                    continue
                if after is not None and (offset is None or after > offset):
                    offset = after
                    self.journal.save_offset(offset)
                continue
            self.connected, conflicted, backoff = True, False, 1.0
            if updates:
                offset = await self._handle(updates, offset)

    async def _one_by_one(self, offset: int | None) -> tuple[tuple[Update, ...], int | None]:
        """The batch again as raw JSON, each update parsed alone: a malformed one is logged and skipped, so
        it cannot stop the ones after it. Also the offset past every update of the batch."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PTB warns that get_updates exists: its parsing is the problem
            raw = await self.bot.do_api_request("getUpdates", api_kwargs={"offset": offset, "timeout": 0})
        parsed: list[Update] = []
        after: int | None = None
        for item in raw if isinstance(raw, list) else []:
            update_id = item.get("update_id") if isinstance(item, dict) else None
            if not isinstance(update_id, int):
                continue
            after = max(after or 0, update_id + 1)
            try:
                update = Update.de_json(item, self.bot)
            except Exception as exc:  # noqa: BLE001 - PTB raises KeyError/TypeError/ValueError here
                self._error(f"update {update_id} is malformed ({type(exc).__name__}); skipped")
                continue
            if update is not None:
                parsed.append(update)
        return tuple(parsed), after

    async def _handle(self, updates: tuple[Update, ...], offset: int | None) -> int | None:
        assert self.sink is not None
        for update in updates:
            await self._handle_one(update)
            offset = update.update_id + 1
        if offset is not None:
            self.journal.save_offset(offset)  # before the next getUpdates acknowledges this batch
        return offset

    async def _handle_one(self, update: Update) -> None:
        assert self.sink is not None
        if self.sink.seen(self, event_id(update.update_id)):
            return  # journaled before a crash that kept the offset from moving (or a webhook redelivery)
        try:
            media = await self._media(update)
            message = to_inbound(update, self.bot.id, self.bot.username, media)
            if message is not None:
                self.last_inbound = _now()
                await self.sink.deliver(self, message)
        except ValueError as exc:
            self._error(f"update {update.update_id} is malformed ({exc}); skipped")
        except Exception as exc:  # noqa: BLE001 - one bad update must not stop the others
            self._error(f"update {update.update_id} could not be handled ({type(exc).__name__}: {exc})")

    async def _media(self, update: Update) -> tuple[Any, ...]:
        message = update.message
        if message is None:
            return ()
        from openclaw_cli.channels.telegram.files import download_media

        return await download_media(self, message)

    # ------------------------------------------------------------------ outbound

    def split(self, text: str) -> list[str]:
        return split_text(text, LIMIT)

    async def typing(self, target: Target) -> None:
        """Best effort, and never in the replies' way: at most TYPING_SLOTS at once, else skipped."""
        if self._typing_slots.locked():
            return
        async with self._typing_slots:
            with contextlib.suppress(Exception):
                await self.bot.send_chat_action(int(target.chat_id), ChatAction.TYPING)

    async def send(self, target: Target, text: str) -> str | None:
        """One part, as HTML (plain text when Telegram refuses the markup), quoting `target.reply_to`.

        429 waits `retry_after`; 5xx and network errors back off; after `retries` it is a SendError."""
        reply = (
            ReplyParameters(int(target.reply_to), allow_sending_without_reply=True)
            if target.reply_to
            else None
        )
        backoff = 0.5
        last: Exception | None = None
        for _ in range(self.retries + 1):
            try:
                sent = await self._send_once(int(target.chat_id), text, reply)
                self.last_outbound = _now()
                return str(sent)
            except RetryAfter as exc:
                last = exc
                await asyncio.sleep(_seconds(exc.retry_after))
            except (Forbidden, InvalidToken) as exc:
                self._error(f"sendMessage refused ({type(exc).__name__}: {exc})")
                raise PermanentSendError(str(exc)) from exc
            except BadRequest as exc:
                self._error(f"sendMessage refused (BadRequest: {exc})")
                raise PermanentSendError(str(exc)) from exc
            except NetworkError as exc:  # 5xx, a dropped connection, a timeout
                last = exc
                self._error(f"sendMessage failed ({type(exc).__name__}: {exc}); retrying in {backoff:.1f} s")
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF)
            except TelegramError as exc:
                raise PermanentSendError(str(exc)) from exc
        self._error(f"sendMessage gave up after {self.retries + 1} attempts: {last}")
        raise SendError(str(last))

    async def _send_once(self, chat_id: int, text: str, reply: ReplyParameters | None) -> int:
        markup = to_html(text)
        if len(markup) <= 4096:
            try:
                message = await self.bot.send_message(
                    chat_id, markup, parse_mode=ParseMode.HTML, reply_parameters=reply
                )
                return message.message_id
            except BadRequest as exc:
                if "parse" not in str(exc).lower() and "entit" not in str(exc).lower():
                    raise
                log.warning("telegram: HTML refused (%s); sending the part as plain text", exc)
        message = await self.bot.send_message(chat_id, text, reply_parameters=reply)
        return message.message_id

    # ------------------------------------------------------------------ status

    def status(self) -> dict[str, Any]:
        return {
            "connected": self.connected,
            "mode": self.section.mode,
            "lastInbound": self.last_inbound,
            "lastOutbound": self.last_outbound,
            "lastError": self.last_error,
        }
