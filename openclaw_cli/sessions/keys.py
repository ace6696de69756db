"""Session keys (seed 003 §3.1): build, parse and choose the key a message belongs to.

Forms (all lower-case, parts separated by ':'):
    agent:{agentId}:main                                      the main session (dmScope main, and
                                                              main-shared-by-everyone)
    agent:{agentId}:direct:{peerId}                           dmScope per-peer
    agent:{agentId}:{channel}:direct:{peerId}                 dmScope per-channel-peer
    agent:{agentId}:{channel}:{accountId}:direct:{peerId}     dmScope per-account-channel-peer
    agent:{agentId}:{channel}:{accountId}:group:{groupId}     group chats, whatever the dmScope
The number of parts tells the forms apart, so a channel named "direct" or "main" is still unambiguous.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from openclaw_cli.core.errors import InvalidInput

# `main` is the owner's: claims.dm_session sends another person's DM to their own per-channel-peer session.
# Every DM in one session, what seed 003 §3.3 warns about ("what Alice says, Bob can see"), must be asked
# for by a name that says so.
SHARED_MAIN = "main-shared-by-everyone"
DmScope = Literal[
    "main", "main-shared-by-everyone", "per-peer", "per-channel-peer", "per-account-channel-peer"
]
DM_SCOPES: tuple[str, ...] = (
    "main",
    SHARED_MAIN,
    "per-peer",
    "per-channel-peer",
    "per-account-channel-peer",
)
KeyKind = Literal["main", "direct", "group"]

MAX_PART_LENGTH = 128
# Printable ASCII without ':' (the separator), '/', '\\' and whitespace; enough for phone numbers,
# e-mail addresses and platform ids, and safe to show in a terminal.
_PART_RE = re.compile(r"^[a-z0-9_.+@=#~!$%&*,;-]+$")
_KEY_HELP = "a key looks like agent:main:main or agent:main:telegram:default:direct:123"


@dataclass(frozen=True)
class SessionKey:
    """A parsed session key. Fields that a form does not use are None."""

    agent_id: str
    kind: KeyKind
    channel: str | None = None
    account_id: str | None = None
    peer_id: str | None = None  # DM peer, or the group id for kind == "group"

    def __str__(self) -> str:
        return build_key(self)


def normalize_part(value: str, what: str) -> str:
    """One key part, lower-cased and validated; raises InvalidInput with a fix hint."""
    part = value.strip().lower()
    if not part:
        raise InvalidInput(f"{what} is empty", hint=_KEY_HELP)
    if len(part) > MAX_PART_LENGTH:
        raise InvalidInput(f"{what} is longer than {MAX_PART_LENGTH} characters")
    if part in (".", "..") or not _PART_RE.match(part):
        raise InvalidInput(
            f"invalid {what} {value!r}",
            hint="use letters, digits and + @ . _ - (no ':', '/', spaces or control characters)",
        )
    return part


def build_key(key: SessionKey) -> str:
    """The canonical text of `key`; validates every part."""
    agent = normalize_part(key.agent_id, "agent id")
    if key.kind == "main":
        return f"agent:{agent}:main"
    peer = normalize_part(key.peer_id or "", "group id" if key.kind == "group" else "peer id")
    if key.kind == "group":
        channel = normalize_part(key.channel or "", "channel")
        account = normalize_part(key.account_id or "", "account id")
        return f"agent:{agent}:{channel}:{account}:group:{peer}"
    if key.channel is None:
        if key.account_id is not None:
            raise InvalidInput("an account id needs a channel in a session key")
        return f"agent:{agent}:direct:{peer}"
    channel = normalize_part(key.channel, "channel")
    if key.account_id is None:
        return f"agent:{agent}:{channel}:direct:{peer}"
    account = normalize_part(key.account_id, "account id")
    return f"agent:{agent}:{channel}:{account}:direct:{peer}"


def parse_key(text: str) -> SessionKey:
    """Parse a key (case-insensitive); `build_key(parse_key(k))` is the canonical form of k."""
    parts = text.strip().split(":")
    if len(parts) < 3 or parts[0].lower() != "agent":
        raise InvalidInput(f"not a session key: {text!r}", hint=_KEY_HELP)
    agent = normalize_part(parts[1], "agent id")
    rest = [p.lower() for p in parts[2:]]
    if rest == ["main"]:
        return SessionKey(agent, "main")
    if len(rest) == 2 and rest[0] == "direct":
        return SessionKey(agent, "direct", peer_id=normalize_part(rest[1], "peer id"))
    if len(rest) == 3 and rest[1] == "direct":
        return SessionKey(
            agent, "direct", normalize_part(rest[0], "channel"), None, normalize_part(rest[2], "peer id")
        )
    if len(rest) == 4 and rest[2] in ("direct", "group"):
        kind: KeyKind = "direct" if rest[2] == "direct" else "group"
        return SessionKey(
            agent,
            kind,
            normalize_part(rest[0], "channel"),
            normalize_part(rest[1], "account id"),
            normalize_part(rest[3], "group id" if kind == "group" else "peer id"),
        )
    raise InvalidInput(f"not a session key: {text!r}", hint=_KEY_HELP)


def canonical_key(text: str) -> str:
    return build_key(parse_key(text))


def looks_like_key(text: str) -> bool:
    return text.strip().lower().startswith("agent:")


def linked_identity(channel: str, peer_id: str, identity_links: Mapping[str, Sequence[str]]) -> str | None:
    """The person `channel:peer_id` is linked to in session.identityLinks, if any."""
    wanted = f"{channel.strip().lower()}:{peer_id.strip().lower()}"
    for person, addresses in identity_links.items():
        if any(address.strip().lower() == wanted for address in addresses):
            return person
    return None


def dm_key(
    agent_id: str,
    channel: str,
    account_id: str,
    peer_id: str,
    *,
    dm_scope: str = "main",
    identity_links: Mapping[str, Sequence[str]] | None = None,
) -> SessionKey:
    """The session a direct message from `peer_id` goes to under `dm_scope`, as keys go: `main` and
    main-shared-by-everyone give the main session whoever writes (claims.dm_session, which knows the
    owner, sends other people elsewhere under `main`).

    identityLinks replace the peer by the linked person, so one person writing from several channels
    lands in one session under per-peer (per-channel scopes still keep the channels apart).
    """
    if dm_scope not in DM_SCOPES:
        raise InvalidInput(f"unknown dmScope {dm_scope!r}", hint=f"use one of {', '.join(DM_SCOPES)}")
    channel_part = normalize_part(channel, "channel")
    account_part = normalize_part(account_id, "account id")
    peer_part = normalize_part(peer_id, "peer id")
    if dm_scope in ("main", SHARED_MAIN):
        return SessionKey(normalize_part(agent_id, "agent id"), "main")
    person = linked_identity(channel_part, peer_part, identity_links or {})
    peer = normalize_part(person, "identity link name") if person else peer_part
    if dm_scope == "per-peer":
        key = SessionKey(agent_id, "direct", peer_id=peer)
    elif dm_scope == "per-channel-peer":
        key = SessionKey(agent_id, "direct", channel_part, None, peer)
    else:
        key = SessionKey(agent_id, "direct", channel_part, account_part, peer)
    return parse_key(build_key(key))


def group_key(agent_id: str, channel: str, account_id: str, group_id: str) -> SessionKey:
    return parse_key(build_key(SessionKey(agent_id, "group", channel, account_id, group_id)))
