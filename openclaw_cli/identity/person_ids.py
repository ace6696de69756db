"""Person ids and identityLinks as plain text rules: checking an id, resolving an address or a name
through the links, and validating the links themselves.

They need no settings, only the links, so config.py validates `session.identityLinks` with them without
importing identity.py (which reads the settings' owner and links to decide who a message belongs to).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.sessions.keys import linked_identity, normalize_part

MAX_PERSON_LENGTH = 128


def check_identity(value: Any, what: str) -> str:
    """A person id or peer id as given by a caller: a non-empty string of at most 128 characters."""
    if not isinstance(value, str):
        raise InvalidInput(f"{what} must be a string, not {type(value).__name__}")
    text = value.strip()
    if not text:
        raise InvalidInput(f"{what} is empty", hint="give the id of the person who speaks")
    if len(text) > MAX_PERSON_LENGTH:
        raise InvalidInput(f"{what} is longer than {MAX_PERSON_LENGTH} characters")
    if "\x00" in text or any(ch in text for ch in "\r\n\t"):
        raise InvalidInput(f"{what} contains a control character")
    return text


def person_of_address(channel: str, peer_id: str, links: Mapping[str, Sequence[str]]) -> str:
    """The person behind `channel:peer_id`: its identityLinks name, else the address."""
    channel_part = normalize_part(channel, "channel")
    peer_part = normalize_part(check_identity(peer_id, "the peer id"), "peer id")
    linked = linked_identity(channel_part, peer_part, links)
    person = linked.strip().lower() if linked else f"{channel_part}:{peer_part}"
    return check_identity(person, "the person id")


def canonical_person(value: Any, links: Mapping[str, Sequence[str]]) -> str:
    """A person id given directly (`--user`, `userId`): a linked name or address becomes the link's name
    (lower-case, as keys are); any other id is kept exactly as given (memory user ids match exactly)."""
    text = check_identity(value, "the person id")
    lowered = text.lower()
    if any(name.strip().lower() == lowered for name in links):
        return lowered
    channel, sep, peer = lowered.partition(":")
    if sep and channel and peer:
        linked = linked_identity(channel, peer, links)
        if linked:
            return linked.strip().lower()
    return text


def validate_links(links: Mapping[str, Sequence[str]]) -> None:
    """identityLinks: valid names and `channel:peer` addresses, each address under one person only."""
    seen: dict[str, str] = {}
    for name, addresses in links.items():
        normalize_part(check_identity(name, "an identityLinks name"), "identityLinks name")
        for address in addresses:
            channel, sep, peer = str(address).strip().lower().partition(":")
            if not sep or not channel or not peer:
                raise InvalidInput(
                    f"identityLinks entry {address!r} of {name!r} is not a channel:peer address",
                    hint="write addresses like telegram:123456789",
                )
            full = f"{normalize_part(channel, 'channel')}:{normalize_part(peer, 'peer id')}"
            other = seen.get(full)
            if other is not None and other != name.strip().lower():
                raise InvalidInput(
                    f"identityLinks: {full} is linked to both {other!r} and {name!r}",
                    hint="keep each address under one person",
                )
            seen[full] = name.strip().lower()
