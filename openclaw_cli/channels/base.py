"""The channel interface: what a platform adapter implements and what the gateway gives it.

A `Channel` is started with a `Sink` and stopped with the gateway. It turns each platform event into one
`Inbound` and awaits `sink.deliver(message)`: that returns once the message is durably journaled (or refused
by access control), so a pulling channel (Telegram) may then move its update offset past it. The sink sends
the reply through `channel.send(target, text)`, always to `message.target`, the chat the message came from:
the model never picks a chat. `send` raises `SendError` for a failure worth retrying later and
`PermanentSendError` for one that never will succeed (the chat is gone, the bot was blocked).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol

PeerKind = Literal["direct", "group", "channel"]


@dataclass(frozen=True)
class Media:
    """A file saved under home/media/ (channels/media.py): never the sender's name, never their type."""

    path: str  # the generated file name inside home/media/
    mime: str  # sniffed from the bytes
    size: int
    kind: str  # photo, voice, audio, document, video


@dataclass(frozen=True)
class Target:
    """Where a reply goes: the chat of the message it answers, and (optionally) the message to quote or the
    thread to answer in."""

    chat_id: str
    reply_to: str | None = None
    thread: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, value: dict[str, Any]) -> Target:
        return cls(str(value["chat_id"]), value.get("reply_to"), value.get("thread"))


@dataclass(frozen=True)
class Inbound:
    """One platform message, normalised. `event_id` is unique per channel account (Telegram's update id,
    Slack's event id): a message seen twice is answered once."""

    channel: str
    account_id: str
    event_id: str
    peer_kind: PeerKind
    peer_id: str  # the DM partner, or the group/channel id
    sender: str  # the platform user id of who spoke
    text: str
    target: Target
    sender_name: str | None = None
    reply_to_text: str | None = None  # the text of the message it replies to, when it is one
    addressed: bool = True  # in a group: mentioned or replying to the bot (always True in a DM)
    media: tuple[Media, ...] = field(default_factory=tuple)

    def prompt_text(self) -> str:
        """The text the model sees: the words, then one line per attached file."""
        lines = [self.text] if self.text else []
        for item in self.media:
            if not item.path:  # refused by the size cap: the model can say so rather than ignore it
                lines.append(f"[a {item.kind} was sent but refused: larger than the size limit]")
            else:
                lines.append(f"[{item.kind} received: media/{item.path}, {item.mime}, {item.size} bytes]")
        return "\n".join(lines)


class SendError(Exception):
    """A send that failed after the channel's own retries; retried at the next start."""


class PermanentSendError(SendError):
    """A send that can never succeed (bad chat, blocked bot): recorded as failed, not retried."""


class Sink(Protocol):
    async def deliver(self, channel: Channel, message: Inbound) -> None:
        """Journal the message (or refuse it) and queue its turn; returns once it is durable."""
        ...

    def seen(self, channel: Channel, event_id: str) -> bool:
        """Whether this event was already journaled (a redelivered update, a Slack retry)."""
        ...


class Channel(Protocol):
    """One account on one platform. The gateway holds one instance per enabled account."""

    name: str  # "telegram", "slack"
    account_id: str

    async def start(self, sink: Sink) -> None:
        """Begin receiving (start polling, or get ready for pushed events); returns at once."""
        ...

    async def stop(self) -> None:
        """Stop receiving; a message being delivered is finished or left unacknowledged."""
        ...

    async def send(self, target: Target, text: str) -> str | None:
        """Send one part of a reply (already short enough); the platform's message id."""
        ...

    async def typing(self, target: Target) -> None:
        """Show that an answer is being written (best effort; never raises)."""
        ...

    def split(self, text: str) -> list[str]:
        """A reply cut into the parts this platform accepts."""
        ...

    def status(self) -> dict[str, Any]:
        """connected, mode, lastInbound, lastOutbound, lastError, offset: for `channels status`."""
        ...
