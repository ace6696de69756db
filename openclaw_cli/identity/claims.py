"""What a caller may claim about who speaks (issue 47): one set of rules for every entry point.

A token holder chooses person ids at several doors: `/v1` `user`, `/hooks/agent` `peer` and `sender`,
WebSocket and `POST /rpc/METHOD` `userId` (chat.send, memory.search, memory.inject, session.search, ...),
`openclaw chat --user`, `session append --sender`. A front end (a web chat, a bridge) often passes its own
users' ids through, so the gateway token must not be enough to be served as somebody else. Three rules:

- The owner's name: an id that spells it is the owner only through an address the owner is known by (an
  identityLinks entry under the owner, or the owner configured as that address); otherwise it is refused,
  and the memories and MEMORY.md of the owner stay out of reach (`claimed_person`).
- A direct message's speaker is its peer: a DM session takes the words of its own person only, so nobody
  reads another person's DM history by speaking in it (`check_dm_speaker`, `inbound_identity`).
- The main session is the owner's: under dmScope `main` another person's DM goes to their own
  per-channel-peer session, and a person other than the owner who asks for the main session gets a session
  of their own (`dm_session`, `speaker_session`). Only dmScope `main-shared-by-everyone` puts everyone in
  the main session, where everyone sees everyone's words (seed 003 §3.3 warns about exactly that).

A group `sender` is trusted as the channel tells it (any holder of the gateway token can say any sender in a
group): a group is shared by design, and the sender decides only whose memories a message writes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.identity.person_ids import canonical_person, check_identity, person_of_address
from openclaw_cli.identity.persons import Identity, IdentityRules, for_key, identify, owner_id
from openclaw_cli.sessions.keys import SHARED_MAIN, SessionKey, build_key, dm_key, parse_key

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Settings

REROUTED = (
    "the main session is the owner's: this person speaks in their own session (session.dmScope "
    f"{SHARED_MAIN} would put everyone in the main session)"
)
_OWNER_HINT = (
    "leave the id out to speak as the owner, or link an address to the owner in session.identityLinks "
    "and give that address"
)


def _is_address(text: str) -> bool:
    channel, sep, peer = text.partition(":")
    return bool(sep and channel.strip() and peer.strip())


def claimed_person(
    given: Any, settings: Settings | IdentityRules, what: str, *, channel: str | None = None
) -> str:
    """The person a caller-chosen id names, the same way at every entry point. With `channel` the id is a
    peer on that channel (`/v1` `user` on `openai`, a hook's `peer` or `sender`); without it a person id
    (`userId`, `--user`), where a `channel:peer` address counts as that address.

    Refused (InvalidInput, one line): an id that is not a string of 1-128 characters, one that spells the
    owner's name but belongs to somebody else, and a bare name that would make the caller the owner: the
    owner is reached only through an address the configuration gives them."""
    rules = IdentityRules.of(settings)
    text = check_identity(given, what)
    if channel is not None:
        person = person_of_address(channel, text, rules.links)
        by_address = True
    else:
        person = canonical_person(text, rules.links)
        by_address = _is_address(text)
    owner = owner_id(rules)
    spells_owner = text.lower() == owner.lower()
    if (person == owner and not by_address) or (spells_owner and person != owner):
        raise InvalidInput(f"{what} {text!r} is the owner's name", hint=_OWNER_HINT)
    return person


def check_dm_speaker(settings: Settings | IdentityRules, key: SessionKey, who: Identity, what: str) -> None:
    """A direct session takes only its own person's words: anyone else speaking there would be sent its
    history (and, in the transcript index, count as having taken part in it)."""
    if key.kind != "direct":
        return
    peer = for_key(settings, key).person
    # keys are lower-case, so the peer's person is compared without case (an explicit id keeps its own)
    if who.person is None or peer is None or who.person.lower() != peer.lower():
        raise InvalidInput(
            f"{what} {who.person!r} is not the peer of the direct session {build_key(key)} ({peer!r}): "
            "a direct message's sender is its peer",
            hint="send it in the speaker's own session, or as a group message with a sender",
        )


def inbound_identity(settings: Settings, channel: str, peer: Any, sender: str | None) -> Identity:
    """The person of a channel's inbound message (`/hooks/agent`): a DM's peer (a `sender` other than the
    peer, after identityLinks, is refused), a group's `sender`, else nobody."""
    if peer.kind == "direct":
        person = claimed_person(peer.id, settings, '"peer"', channel=channel)
        if sender is not None:
            said = claimed_person(sender, settings, '"sender"', channel=channel)
            if said.lower() != person.lower():
                raise InvalidInput(
                    f'"sender" {sender!r} is not the direct peer {peer.id!r}: a direct message\'s sender is '
                    "its peer",
                    hint="leave out sender for a direct message, or send it with the group's peer",
                )
        return identify(person, settings)
    if sender is not None:
        return identify(claimed_person(sender, settings, '"sender"', channel=channel), settings)
    return identify(None, settings, anonymous_reason="a group message without `sender` has no identity")


def speaker_identity(
    settings: Settings | IdentityRules,
    key: SessionKey,
    *,
    user: Any = None,
    sender: Any = None,
    user_what: str = '"userId"',
    sender_what: str = '"sender"',
) -> Identity:
    """Who speaks in a message for session `key` (chat.send, `openclaw chat`, `session append`): the
    claimed `user`, else the `sender` (on the key's channel), else the key's own person; claims go through
    `claimed_person`."""
    if user is not None:
        return identify(claimed_person(user, settings, user_what), settings)
    if sender is not None:
        person = claimed_person(sender, settings, sender_what, channel=key.channel)
        return identify(person, settings)
    return for_key(settings, key)


@dataclass(frozen=True)
class SpeakerSession:
    key: SessionKey
    rerouted: bool = False  # the main session was asked for, and the speaker's own session given


def own_key(agent_id: str, person: str) -> SessionKey:
    """A person's own session when no channel names one: `agent:A:direct:PERSON`, or for an address
    person `agent:A:CHANNEL:direct:PEER` (the key their DMs get under per-channel-peer)."""
    channel, sep, peer = person.partition(":")
    candidate = (
        SessionKey(agent_id, "direct", channel, None, peer)
        if sep
        else SessionKey(agent_id, "direct", peer_id=person)
    )
    try:
        return parse_key(build_key(candidate))
    except InvalidInput as exc:
        raise InvalidInput(
            f"the main session is the owner's, and {person!r} cannot name a session of its own",
            hint="give the person's own session key",
        ) from exc


def speaker_session(
    settings: Settings | IdentityRules, key: SessionKey, who: Identity, what: str, *, reroute: bool = True
) -> SpeakerSession:
    """The session `who` may speak in when `key` is asked for: a direct session only its own person's; the
    main session the owner's, so another person gets their own (`reroute`) or is refused."""
    if key.kind == "direct":
        check_dm_speaker(settings, key, who, what)
        return SpeakerSession(key)
    if key.kind != "main" or who.owner or who.person is None:
        return SpeakerSession(key)
    if IdentityRules.of(settings).dm_scope == SHARED_MAIN:
        return SpeakerSession(key)
    if not reroute:
        raise InvalidInput(
            f"{what} {who.person!r} is not the owner, and the main session is the owner's",
            hint=f"use the person's own session key, or set session.dmScope to {SHARED_MAIN}",
        )
    return SpeakerSession(own_key(key.agent_id, who.person), rerouted=True)


def dm_session(settings: Settings, agent_id: str, channel: str, account: str, peer_id: str) -> SpeakerSession:
    """The session of a channel's direct message under the configured dmScope: `main` keeps the main
    session for the owner and sends anyone else to their own per-channel-peer session."""
    session = settings.session
    scope = session.dm_scope
    rerouted = False
    if scope == "main" and person_of_address(channel, peer_id, session.identity_links) != owner_id(settings):
        scope, rerouted = "per-channel-peer", True
    key = dm_key(agent_id, channel, account, peer_id, dm_scope=scope, identity_links=session.identity_links)
    return SpeakerSession(key, rerouted)
