"""Telegram's objects to the channel interface's: an Update to an `Inbound`, a reply to Telegram HTML."""

from __future__ import annotations

import html
import re
from typing import TYPE_CHECKING

from openclaw_cli.channels.base import Inbound, Media, PeerKind, Target

if TYPE_CHECKING:
    from telegram import Message, Update

CHANNEL = "telegram"
KINDS: dict[str, PeerKind] = {
    "private": "direct",
    "group": "group",
    "supergroup": "group",
    "channel": "channel",
}


def event_id(update_id: int) -> str:
    return f"u{update_id}"


def addressed(message: Message, bot_id: int, username: str | None) -> bool:
    """In a group: the bot is @mentioned, or the message replies to one of the bot's."""
    replied = message.reply_to_message
    if replied is not None and replied.from_user is not None and replied.from_user.id == bot_id:
        return True
    text = message.text or message.caption or ""
    return bool(username) and f"@{username}".lower() in text.lower()


def to_inbound(
    update: Update, bot_id: int, username: str | None, media: tuple[Media, ...] = ()
) -> Inbound | None:
    """The update as one normalised message; None for what carries nothing to answer (edits, joins, the
    bot's own or another bot's messages)."""
    message = update.message
    if message is not None and getattr(message, "chat", None) is None:
        raise ValueError("a message without a chat")  # PTB accepts it; nothing can be answered
    if message is None or message.from_user is None or message.from_user.is_bot:
        return None
    kind = KINDS.get(message.chat.type)
    if kind is None:
        return None
    text = message.text or message.caption or ""
    if username:  # the mention addresses the bot; the model need not read it
        text = re.sub(rf"@{re.escape(username)}\b", "", text, flags=re.IGNORECASE).strip()
    if not text and not media:
        return None
    user = message.from_user
    direct = kind == "direct"
    replied = message.reply_to_message
    return Inbound(
        channel=CHANNEL,
        account_id="default",
        event_id=event_id(update.update_id),
        peer_kind=kind,
        peer_id=str(message.chat.id),
        sender=str(user.id),
        sender_name=user.full_name or user.username,
        text=text,
        target=Target(str(message.chat.id), None if direct else str(message.message_id)),
        reply_to_text=(replied.text or replied.caption) if replied is not None else None,
        addressed=direct or addressed(message, bot_id, username),
        media=media,
    )


FENCED = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)
INLINE = re.compile(r"`([^`\n]+)`")
BOLD = re.compile(r"\*\*([^*\n]+)\*\*")


def to_html(text: str) -> str:
    """Markdown-ish model output as Telegram HTML (code blocks, inline code, bold; the rest escaped).

    When Telegram still refuses it ("can't parse entities"), the sender falls back to the plain text."""
    pieces: list[str] = []
    last = 0
    for match in FENCED.finditer(text):
        pieces.append(_inline(text[last : match.start()]))
        pieces.append(f"<pre>{html.escape(match.group(1), quote=False)}</pre>")
        last = match.end()
    pieces.append(_inline(text[last:]))
    return "".join(pieces)


def _inline(text: str) -> str:
    escaped = html.escape(text, quote=False)
    escaped = INLINE.sub(lambda m: f"<code>{m.group(1)}</code>", escaped)
    return BOLD.sub(lambda m: f"<b>{m.group(1)}</b>", escaped)
