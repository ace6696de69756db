"""Who a message belongs to: every inbound message resolves to a person id (seed 003 §3.3, seed 000 §8).

A person id is the canonical name a `session.identityLinks` entry gives the address, else the address
itself, `<channel>:<peer id>` (lower-case). So `telegram:123` and `discord:987` linked to `alice` are one
person, `alice`, and an unlinked Telegram user is `telegram:123`. The owner of the assistant (`owner` in
the config; `default` when unset, the person the CLI writes for) is one person across channels.

Long-term memory is written, injected, searched and purged per person. `None` means a message with no
identity at all (an anonymous `/v1` call): it is stored in its session but writes no memory about anyone.
Checking an id and resolving it through the links alone is person_ids.py; this module adds the settings.
What a caller may claim (the owner's name, a DM's speaker, the main session) is claims.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from openclaw_cli.identity.person_ids import canonical_person, person_of_address
from openclaw_cli.sessions.keys import SessionKey

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Settings

DEFAULT_OWNER = "default"  # the person of `memory add` without --user, and of stores written before owners
# Why a turn wrote no memory: said in the /v1 reply's metadata and as a notice.
ANONYMOUS_REASON = (
    "this message carries no identity, so nothing about a person is remembered from it; send `user` "
    "(or `sender`), or set gateway.anonymousIsOwner to true if anonymous calls are the owner's"
)


@dataclass(frozen=True)
class IdentityRules:
    """What resolving a person needs from the settings (`session append` caches it to skip pydantic)."""

    links: Mapping[str, Sequence[str]]
    owner: str | None = None
    anonymous_is_owner: bool = False
    dm_scope: str = "main"  # whether the main session is the owner's alone (claims.py)

    @classmethod
    def of(cls, settings: Settings | IdentityRules) -> IdentityRules:
        if isinstance(settings, IdentityRules):
            return settings
        session = settings.session
        return cls(
            session.identity_links, settings.owner, settings.gateway.anonymous_is_owner, session.dm_scope
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "links": dict(self.links),
            "owner": self.owner,
            "anonymousIsOwner": self.anonymous_is_owner,
            "dmScope": self.dm_scope,
        }

    @classmethod
    def from_dict(cls, value: dict[str, Any]) -> IdentityRules:
        return cls(
            dict(value["links"]),
            value.get("owner"),
            bool(value.get("anonymousIsOwner")),
            str(value.get("dmScope", "main")),
        )


def owner_id(settings: Settings | IdentityRules) -> str:
    """The owner's person id: `owner` resolved through identityLinks, else `default`."""
    rules = IdentityRules.of(settings)
    if rules.owner is None:
        return DEFAULT_OWNER
    return canonical_person(rules.owner, rules.links)


def author_of(user: str | None, scope: str, settings: Settings | IdentityRules) -> str | None:
    """Whose memory a write that names no person is: a user-scope memory is the owner's (the person the
    CLI writes for); an agent-scope one is nobody's. A named person stays as named."""
    if user is None and scope == "user":
        return owner_id(settings)
    return user


@dataclass(frozen=True)
class Identity:
    """Who spoke: `person` (None: nobody known) and whether it is the assistant's owner."""

    person: str | None
    owner: bool = False
    reason: str | None = None  # why there is no person

    def public_dict(self) -> dict[str, Any]:
        return {"person": self.person, "owner": self.owner, "memory": self.reason or "per person"}


def identify(
    person: str | None, settings: Settings | IdentityRules, *, anonymous_reason: str = ANONYMOUS_REASON
) -> Identity:
    if person is None:
        if IdentityRules.of(settings).anonymous_is_owner:
            return Identity(owner_id(settings), owner=True)
        return Identity(None, reason=anonymous_reason)
    return Identity(person, owner=person == owner_id(settings))


def for_key(
    settings: Settings | IdentityRules, key: SessionKey, *, sender: str | None = None, user: str | None = None
) -> Identity:
    """Who speaks in a message for session `key`: an explicit person id, else the group speaker
    (`sender` on the key's channel), else the DM peer; the main session is the owner's."""
    links = IdentityRules.of(settings).links
    if user is not None:
        return identify(canonical_person(user, links), settings)
    if sender is not None:
        if key.channel is None:
            return identify(canonical_person(sender, links), settings)
        return identify(person_of_address(key.channel, sender, links), settings)
    if key.kind == "main":
        return Identity(owner_id(settings), owner=True)
    if key.kind == "direct" and key.peer_id is not None:
        if key.channel is not None:
            return identify(person_of_address(key.channel, key.peer_id, links), settings)
        # per-peer keys hold the linked name, or the bare peer id when the peer is not linked
        return identify(canonical_person(key.peer_id, links), settings)
    return identify(None, settings)


def is_private(key: SessionKey, identity: Identity) -> bool:
    """Whether MEMORY.md is loaded: the owner speaking in the main session or in a DM, under any dmScope
    (under main-shared-by-everyone other people's DMs share the main session too, and must not get it)."""
    return identity.owner and key.kind in ("main", "direct")


def history_name(person: str | None) -> str:
    """The file name of a person's `openclaw chat` prompt history (a digest: ids may hold any character)."""
    import hashlib

    if person is None:
        return "anonymous.history"
    return hashlib.sha256(person.encode("utf-8")).hexdigest()[:24] + ".history"
