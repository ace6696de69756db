"""Which agent and which session an inbound channel message belongs to (seed 003 §3, §5.2).

Bindings are tried level by level, most specific first: peer > parentPeer > guild+roles > guild > team >
account > channel > the default agent. A binding belongs to the level of the most specific field it
names, and applies when every field it names matches the message; within one level the first binding in
the file wins. The session key then comes from the key builder (dmScope, identityLinks); under dmScope
`main` a DM from anyone but the owner goes to its sender's own per-channel-peer session (claims.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.core.paths import validate_agent_id
from openclaw_cli.identity.claims import dm_session
from openclaw_cli.sessions.keys import build_key, group_key

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Binding, BindingMatch, PeerMatch, Settings

LEVELS = ("peer", "parentPeer", "guild+roles", "guild", "team", "account", "channel")
DEFAULT_ACCOUNT = "default"


@dataclass(frozen=True)
class Peer:
    kind: str  # direct, group or channel
    id: str


@dataclass(frozen=True)
class Inbound:
    """One message from a channel, as `/hooks/agent` receives it."""

    channel: str
    text: str
    peer: Peer
    account_id: str = DEFAULT_ACCOUNT
    sender: str | None = None
    parent_peer: Peer | None = None  # the thread's parent chat, for a message in a thread
    guild_id: str | None = None
    team_id: str | None = None
    roles: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Route:
    agent_id: str
    session_key: str
    level: str  # one of LEVELS, or "default"
    rerouted: bool = False  # a DM kept out of the owner's main session (claims.dm_session)


def _same(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and a.strip().lower() == b.strip().lower()


def _peer_matches(wanted: PeerMatch, got: Peer | None) -> bool:
    return got is not None and wanted.kind == got.kind and _same(wanted.id, got.id)


def binding_level(match: BindingMatch) -> str:
    """The level a binding belongs to: the most specific field it names."""
    if match.peer is not None:
        return "peer"
    if match.parent_peer is not None:
        return "parentPeer"
    if match.guild_id is not None and match.roles:
        return "guild+roles"
    if match.guild_id is not None:
        return "guild"
    if match.team_id is not None:
        return "team"
    if match.account_id is not None:
        return "account"
    return "channel"


def _field_checks(match: BindingMatch, message: Inbound) -> list[Callable[[], bool]]:
    checks: list[Callable[[], bool]] = []
    if match.channel is not None:
        checks.append(lambda: _same(match.channel, message.channel))
    if match.account_id is not None:
        checks.append(lambda: _same(match.account_id, message.account_id))
    if match.peer is not None:
        peer = match.peer
        checks.append(lambda: _peer_matches(peer, message.peer))
    if match.parent_peer is not None:
        parent = match.parent_peer
        checks.append(lambda: _peer_matches(parent, message.parent_peer))
    if match.guild_id is not None:
        checks.append(lambda: _same(match.guild_id, message.guild_id))
    if match.roles:
        wanted = {r.strip().lower() for r in match.roles}
        checks.append(lambda: bool(wanted & {r.strip().lower() for r in message.roles}))
    if match.team_id is not None:
        checks.append(lambda: _same(match.team_id, message.team_id))
    return checks


def binding_matches(binding: Binding, message: Inbound) -> bool:
    checks = _field_checks(binding.match, message)
    return bool(checks) and all(check() for check in checks)


def resolve_agent(bindings: Sequence[Binding], default_agent: str, message: Inbound) -> tuple[str, str]:
    """(agentId, level) for `message`: the first matching binding of the most specific level."""
    for level in LEVELS:
        for binding in bindings:
            if binding_level(binding.match) == level and binding_matches(binding, message):
                return validate_agent_id(binding.agent_id), level
    return validate_agent_id(default_agent), "default"


def route(settings: Settings, message: Inbound) -> Route:
    """The agent and session key of an inbound message under the current settings."""
    if not message.text.strip():
        raise InvalidInput("the message text is empty", hint="send some text")
    agent_id, level = resolve_agent(settings.bindings, settings.agents.default, message)
    account = message.account_id or DEFAULT_ACCOUNT
    if message.peer.kind == "direct":
        chosen = dm_session(settings, agent_id, message.channel, account, message.peer.id)
        return Route(agent_id, build_key(chosen.key), level, chosen.rerouted)
    # group chats and channels: one session per chat, whatever the dmScope
    key = group_key(agent_id, message.channel, account, message.peer.id)
    return Route(agent_id, build_key(key), level)
