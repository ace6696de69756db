"""Inbound Telegram media (photos, voice notes, audio, documents, video) saved under home/media/.

The declared size refuses a file before any byte is fetched; the stream's own count refuses one that lied
(channels/media.py). The file URL holds the bot token, so it is never logged.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import httpx

from openclaw_cli.channels.base import Media
from openclaw_cli.channels.media import TooLarge, save_stream

if TYPE_CHECKING:
    from telegram import Message

log = logging.getLogger("openclaw.channels")
KINDS = ("voice", "audio", "document", "video")


def _attachments(message: Message) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    if message.photo:
        found.append(("photo", message.photo[-1]))  # the largest size Telegram made
    for kind in KINDS:
        item = getattr(message, kind, None)
        if item is not None:
            found.append((kind, item))
    return found


async def download_media(channel: Any, message: Message) -> tuple[Media, ...]:
    cap = int(channel.media_settings.max_bytes)
    saved: list[Media] = []
    for kind, item in _attachments(message):
        declared = getattr(item, "file_size", None)
        if isinstance(declared, int) and declared > cap:
            log.warning("telegram: a %s of %d bytes refused (media.maxBytes %d)", kind, declared, cap)
            saved.append(Media("", "refused", declared, kind))
            continue
        try:
            handle = await channel.bot.get_file(item.file_id)
            result = await save_stream(channel.media_root, _stream(str(handle.file_path)), cap)
        except TooLarge:
            log.warning("telegram: a %s refused while downloading: over media.maxBytes %d", kind, cap)
            saved.append(Media("", "refused", cap + 1, kind))
            continue
        except Exception as exc:  # noqa: BLE001 - a file that cannot be fetched must not lose the message
            log.warning("telegram: a %s could not be downloaded (%s)", kind, type(exc).__name__)
            continue
        saved.append(Media(result.name, result.mime, result.size, kind))
    return tuple(saved)


async def _stream(url: str) -> AsyncIterator[bytes]:
    async with httpx.AsyncClient(timeout=60) as client, client.stream("GET", url) as response:
        response.raise_for_status()
        async for chunk in response.aiter_bytes(65_536):
            yield chunk
