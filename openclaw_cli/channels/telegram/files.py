"""Inbound Telegram media (photos, voice notes, audio, documents, video) saved under home/media/."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from telegram import Message

    from openclaw_cli.channels.base import Media


async def download_media(channel: Any, message: Message) -> tuple[Media, ...]:
    return ()
