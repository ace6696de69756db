"""Session keys: canonical build/parse round trips, dmScope variants, identityLinks, bad parts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.sessions.keys import SessionKey, build_key, canonical_key, dm_key, group_key, parse_key

PART = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_.+@-", min_size=1, max_size=24).filter(
    lambda s: s not in (".", "..")
)


@st.composite
def session_keys(draw: st.DrawFn) -> SessionKey:
    agent = draw(PART)
    form = draw(st.sampled_from(["main", "per-peer", "per-channel-peer", "per-account", "group"]))
    if form == "main":
        return SessionKey(agent, "main")
    if form == "per-peer":
        return SessionKey(agent, "direct", peer_id=draw(PART))
    if form == "per-channel-peer":
        return SessionKey(agent, "direct", draw(PART), None, draw(PART))
    kind = "group" if form == "group" else "direct"
    return SessionKey(agent, kind, draw(PART), draw(PART), draw(PART))


@given(session_keys())
def test_parse_of_build_is_identity(key: SessionKey) -> None:
    assert parse_key(build_key(key)) == key


@given(session_keys())
def test_build_of_parse_is_identity_and_lower_case(key: SessionKey) -> None:
    text = build_key(key)
    assert build_key(parse_key(text)) == text
    assert text == text.lower()
    assert canonical_key(text.upper()) == text


def test_forms_are_as_specified() -> None:
    assert build_key(SessionKey("main", "main")) == "agent:main:main"
    assert build_key(SessionKey("main", "direct", "telegram", "bot1", "123")) == (
        "agent:main:telegram:bot1:direct:123"
    )
    assert str(group_key("Main", "Discord", "Bot1", "555")) == "agent:main:discord:bot1:group:555"


def test_a_channel_named_like_a_keyword_stays_unambiguous() -> None:
    key = SessionKey("a", "direct", "direct", None, "main")
    assert parse_key(build_key(key)) == key


@pytest.mark.parametrize(
    "scope, expected",
    [
        ("main", "agent:main:main"),
        ("per-peer", "agent:main:direct:123"),
        ("per-channel-peer", "agent:main:telegram:direct:123"),
        ("per-account-channel-peer", "agent:main:telegram:bot1:direct:123"),
    ],
)
def test_dm_scope_decides_the_key(scope: str, expected: str) -> None:
    assert build_key(dm_key("main", "Telegram", "bot1", "123", dm_scope=scope)) == expected


def test_identity_links_join_one_person_across_channels() -> None:
    links = {"alice": ["telegram:123", "discord:987"]}
    from_telegram = dm_key("main", "telegram", "bot1", "123", dm_scope="per-peer", identity_links=links)
    from_discord = dm_key("main", "discord", "bot2", "987", dm_scope="per-peer", identity_links=links)
    assert build_key(from_telegram) == build_key(from_discord) == "agent:main:direct:alice"
    stranger = dm_key("main", "discord", "bot2", "555", dm_scope="per-peer", identity_links=links)
    assert build_key(stranger) == "agent:main:direct:555"
    per_channel = dm_key("main", "discord", "bot2", "987", dm_scope="per-channel-peer", identity_links=links)
    assert build_key(per_channel) == "agent:main:discord:direct:alice"


def test_unknown_dm_scope_is_refused() -> None:
    with pytest.raises(InvalidInput):
        dm_key("main", "telegram", "bot1", "1", dm_scope="everyone")


@pytest.mark.parametrize(
    "bad",
    [
        "agent:main",
        "agent::main",
        "agent:main:other",
        "user:main:main",
        "agent:main:t:direct:a/b",
        "agent:ma\x00in:main",
        "agent:main:t:a:direct:",
        "agent:main:t:a:chat:1",
        "agent:main:t:a:direct:x y",
    ],
)
def test_malformed_keys_are_refused(bad: str) -> None:
    with pytest.raises(InvalidInput):
        parse_key(bad)


@pytest.mark.parametrize("part", ["a:b", "a/b", "..", "a\x00", "", "x" * 129, "tab\there"])
def test_bad_parts_are_refused_when_building(part: str) -> None:
    with pytest.raises(InvalidInput):
        build_key(SessionKey("main", "direct", "telegram", "bot", part))
