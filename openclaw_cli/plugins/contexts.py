"""The typed contexts event hooks are called with, and what a hook may answer.

Contexts are frozen: a hook changes nothing by mutating one (a hook that passed its timeout may still be
running, so shared mutable state would race with the turn). It answers instead: `message_received` and
`message_sending` return a `Rewrite` (or a plain str, the new text), `before_prompt_build` returns a str (a
system block), `before_tool_call` returns a `Block` (or a str, the reason) to stop a call.

Conversation access: a plugin without `plugins.entries.<id>.allowConversationAccess` gets every context
with its `CONTENT` fields set to None (`redacted()`): message text, tool arguments and results, replies.
It is still called, so it can count, time and cancel, but it never receives what anyone said; a text it
returns from a message hook is ignored (it cannot rewrite what it did not read).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

E = TypeVar("E", bound="Event")


@dataclass(frozen=True)
class Event:
    CONTENT: ClassVar[tuple[str, ...]] = ()

    def redacted(self: E) -> E:
        """The context without its conversation content (for a plugin without conversation access)."""
        if not self.CONTENT:
            return self
        return dataclasses.replace(self, **dict.fromkeys(self.CONTENT))


@dataclass(frozen=True)
class MessageEvent(Event):
    """message_received (the user's message, before it is stored) and message_sending (the reply, before it
    is stored and sent)."""

    CONTENT: ClassVar[tuple[str, ...]] = ("text",)
    agent_id: str
    session_key: str
    channel: str | None  # "telegram", "slack", a plugin channel, "webchat"... from the session key
    sender: str | None  # who spoke, in a group
    user_id: str | None  # the person, when known
    text: str | None


@dataclass(frozen=True)
class PromptEvent(Event):
    """before_prompt_build: the system prompt is being assembled for the user's message `text`."""

    CONTENT: ClassVar[tuple[str, ...]] = ("text",)
    agent_id: str
    session_key: str
    session_id: str
    user_id: str | None
    text: str | None


@dataclass(frozen=True)
class ToolCallEvent(Event):
    CONTENT: ClassVar[tuple[str, ...]] = ("arguments",)
    agent_id: str
    session_key: str
    tool: str
    plugin_id: str | None  # the plugin that registered the tool; None for a built-in one
    arguments: str | None  # JSON text, as the model wrote it


@dataclass(frozen=True)
class ToolResultEvent(Event):
    CONTENT: ClassVar[tuple[str, ...]] = ("arguments", "result")
    agent_id: str
    session_key: str
    tool: str
    plugin_id: str | None
    arguments: str | None
    result: dict[str, Any] | None
    blocked: bool = False  # a before_tool_call hook stopped it


@dataclass(frozen=True)
class TurnEndEvent(Event):
    CONTENT: ClassVar[tuple[str, ...]] = ("reply",)
    agent_id: str
    session_key: str
    session_id: str
    run_id: str
    status: str  # ok, error, aborted
    reply: str | None
    error: str | None
    stages: dict[str, float]  # ms per stage of the turn


@dataclass(frozen=True)
class SessionEvent(Event):
    """session_start (a new session got its first message) and session_end (a session was archived)."""

    agent_id: str
    session_key: str
    session_id: str
    reason: str  # created, daily, idle, new, reset...


@dataclass(frozen=True)
class GatewayEvent(Event):
    host: str
    port: int
    plugins: tuple[str, ...]  # the ids of the loaded plugins


@dataclass(frozen=True)
class Rewrite:
    """What a message hook answers: a new text, or cancel (the message is not answered / not sent)."""

    text: str | None = None
    cancel: bool = False


@dataclass(frozen=True)
class Block:
    """What before_tool_call answers to stop a call: the model is told `reason`."""

    reason: str
