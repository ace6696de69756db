"""The hooks a plugin may implement (pluggy hook specifications).

Registration hooks are called once, when the plugin loads, with a `register` callable (registry.Registrar:
it also carries `plugin_id` and the plugin's validated `config`). Event hooks are called with one typed
context (contexts.py), each plugin on its own, in load order, within its timeout; what one raises is
counted against it and never reaches the turn, the channel or the gateway.

Every hook is a plain function: it runs on a worker thread, so it may block (within its timeout).
"""

from __future__ import annotations

from typing import Any

from openclaw_cli.plugins import hookspec
from openclaw_cli.plugins.contexts import (
    Block,
    GatewayEvent,
    MessageEvent,
    PromptEvent,
    Rewrite,
    SessionEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnEndEvent,
)

REGISTRATION_HOOKS = (
    "register_tools",
    "register_channels",
    "register_providers",
    "register_routes",
    "register_skills",
)
EVENT_HOOKS = (
    "message_received",
    "message_sending",
    "before_prompt_build",
    "before_tool_call",
    "after_tool_call",
    "turn_end",
    "session_start",
    "session_end",
    "gateway_start",
    "gateway_stop",
)


class Specs:
    # -- the five injection points (the fifth, hooks, is the events below) --------------------------

    @hookspec
    def register_tools(self, register: Any) -> None:
        """`register(name=, description=, parameters=<JSON schema>, fn=)`: a tool offered to the model in
        every turn of the agents that allow it (agents.list[].tools). The model's arguments are checked
        against `parameters` before `fn(**arguments)` runs; `fn` returns a JSON-able value."""

    @hookspec
    def register_channels(self, register: Any) -> None:
        """`register(id, factory)`: `factory(section)` builds a channel (channels/base.Channel) from its
        `channels.<id>` section (channels.settings.PluginChannelSettings); the gateway starts it when the
        section says `enabled: true`, exactly as it starts Telegram and Slack."""

    @hookspec
    def register_providers(self, register: Any) -> None:
        """`register(name, completion)`: `llm.model: "<name>/<model>"` is answered by
        `completion(model=, messages=, tools=, stream=, **options)`, which returns an OpenAI-style chat
        completion (a dict), a plain str (the reply), or, when `stream` is true, may yield chunks."""

    @hookspec
    def register_routes(self, register: Any) -> None:
        """`register(method, path, handler, public=False)`: a Starlette handler served at
        `/plugins/<plugin id><path>`; the gateway token is required unless `public`."""

    @hookspec
    def register_skills(self, register: Any) -> None:
        """`register(path)`: a folder of skills (one folder per skill, each with SKILL.md) the plugin ships."""

    # -- events -------------------------------------------------------------------------------------

    @hookspec
    def message_received(self, ctx: MessageEvent) -> Rewrite | str | None:
        """A user's message, before it is stored: rewrite its text or cancel it (no turn)."""

    @hookspec
    def message_sending(self, ctx: MessageEvent) -> Rewrite | str | None:
        """The model's reply, before it is stored and sent: rewrite it or cancel it (nothing is sent)."""

    @hookspec
    def before_prompt_build(self, ctx: PromptEvent) -> str | None:
        """The system prompt is being built: a returned str is added as one more system block."""

    @hookspec
    def before_tool_call(self, ctx: ToolCallEvent) -> Block | str | None:
        """A tool call the model asked for: return a Block (or a reason) to stop it."""

    @hookspec
    def after_tool_call(self, ctx: ToolResultEvent) -> None:
        """A tool call ran (or was blocked)."""

    @hookspec
    def turn_end(self, ctx: TurnEndEvent) -> None:
        """A turn ended (ok, error or aborted)."""

    @hookspec
    def session_start(self, ctx: SessionEvent) -> None:
        """A new session was created."""

    @hookspec
    def session_end(self, ctx: SessionEvent) -> None:
        """A session was archived (reset rules, `/new`, `/reset`)."""

    @hookspec
    def gateway_start(self, ctx: GatewayEvent) -> None:
        """The gateway is up (its channels started)."""

    @hookspec
    def gateway_stop(self, ctx: GatewayEvent) -> None:
        """The gateway is stopping."""
