"""Bindings: each priority level wins over every less specific one, and session keys follow dmScope."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from openclaw_cli.config.loading import Settings, validate_settings
from openclaw_cli.core.errors import InvalidInput
from openclaw_cli.gateway.routing import LEVELS, Inbound, Peer, route

# One binding per level, each for its own agent, listed least specific first so that file order never
# decides: the level does.
ALL_LEVELS: list[dict[str, Any]] = [
    {"agentId": "by-channel", "match": {"channel": "discord"}},
    {"agentId": "by-account", "match": {"channel": "discord", "accountId": "bot2"}},
    {"agentId": "by-team", "match": {"channel": "discord", "teamId": "t1"}},
    {"agentId": "by-guild", "match": {"channel": "discord", "guildId": "g1"}},
    {"agentId": "by-roles", "match": {"channel": "discord", "guildId": "g1", "roles": ["admin"]}},
    {
        "agentId": "by-parent",
        "match": {"channel": "discord", "parentPeer": {"kind": "group", "id": "thread-parent"}},
    },
    {"agentId": "by-peer", "match": {"channel": "discord", "peer": {"kind": "group", "id": "room1"}}},
]

# (case, message fields, expected agent, expected level): each row carries everything the rows below
# it match too, so the row's own level must be the one that wins.
TABLE = [
    (
        "peer",
        {
            "peer": Peer("group", "room1"),
            "parent_peer": Peer("group", "thread-parent"),
            "guild_id": "g1",
            "roles": ("admin",),
            "team_id": "t1",
            "account_id": "bot2",
        },
        "by-peer",
        "peer",
    ),
    (
        "parentPeer",
        {
            "peer": Peer("group", "room9"),
            "parent_peer": Peer("group", "thread-parent"),
            "guild_id": "g1",
            "roles": ("admin",),
            "team_id": "t1",
            "account_id": "bot2",
        },
        "by-parent",
        "parentPeer",
    ),
    (
        "guild+roles",
        {
            "peer": Peer("group", "room9"),
            "guild_id": "g1",
            "roles": ("member", "admin"),
            "team_id": "t1",
            "account_id": "bot2",
        },
        "by-roles",
        "guild+roles",
    ),
    (
        "guild",
        {
            "peer": Peer("group", "room9"),
            "guild_id": "g1",
            "roles": ("member",),
            "team_id": "t1",
            "account_id": "bot2",
        },
        "by-guild",
        "guild",
    ),
    ("team", {"peer": Peer("group", "room9"), "team_id": "t1", "account_id": "bot2"}, "by-team", "team"),
    ("account", {"peer": Peer("group", "room9"), "account_id": "bot2"}, "by-account", "account"),
    ("channel", {"peer": Peer("group", "room9"), "account_id": "bot1"}, "by-channel", "channel"),
]


def _settings(bindings: list[dict[str, Any]], **extra: Any) -> Settings:
    return validate_settings({"bindings": bindings, **extra}, {}, Path("openclaw.json"))


@pytest.mark.parametrize(("case", "fields", "agent", "level"), TABLE, ids=[row[0] for row in TABLE])
def test_priority_level(case: str, fields: dict[str, Any], agent: str, level: str) -> None:
    message = Inbound(channel="discord", text="hello", **fields)
    target = route(_settings(ALL_LEVELS), message)
    assert (target.agent_id, target.level) == (agent, level)


def test_the_table_covers_every_level() -> None:
    assert [row[3] for row in TABLE] == list(LEVELS)


def test_default_agent_when_nothing_matches() -> None:
    settings = _settings(ALL_LEVELS, agents={"default": "home"})
    target = route(settings, Inbound(channel="telegram", text="hi", peer=Peer("direct", "5")))
    # telegram:5 is not the owner, so under dmScope main it gets its own session (claims.dm_session)
    expected = ("home", "default", "agent:home:telegram:direct:5")
    assert (target.agent_id, target.level, target.session_key) == expected


def test_every_named_field_must_match() -> None:
    bindings = [{"agentId": "work", "match": {"channel": "slack", "peer": {"kind": "direct", "id": "u1"}}}]
    on_other_channel = Inbound(channel="telegram", text="hi", peer=Peer("direct", "u1"))
    assert route(_settings(bindings), on_other_channel).agent_id == "main"
    wrong_kind = Inbound(channel="slack", text="hi", peer=Peer("group", "u1"))
    assert route(_settings(bindings), wrong_kind).agent_id == "main"
    assert (
        route(_settings(bindings), Inbound(channel="SLACK", text="hi", peer=Peer("direct", "U1"))).agent_id
        == "work"
    )


def test_first_binding_wins_within_a_level() -> None:
    bindings = [
        {"agentId": "first", "match": {"channel": "slack"}},
        {"agentId": "second", "match": {"channel": "slack"}},
    ]
    assert (
        route(_settings(bindings), Inbound(channel="slack", text="x", peer=Peer("direct", "1"))).agent_id
        == "first"
    )


@pytest.mark.parametrize(
    ("scope", "key"),
    [
        ("main", "agent:work:telegram:direct:alice"),  # the main session is the owner's; alice is not
        ("main-shared-by-everyone", "agent:work:main"),
        ("per-peer", "agent:work:direct:alice"),
        ("per-channel-peer", "agent:work:telegram:direct:alice"),
        ("per-account-channel-peer", "agent:work:telegram:bot1:direct:alice"),
    ],
)
def test_direct_session_key_follows_dm_scope_and_identity_links(scope: str, key: str) -> None:
    settings = _settings(
        [{"agentId": "work", "match": {"channel": "telegram"}}],
        session={"dmScope": scope, "identityLinks": {"alice": ["telegram:123", "discord:987"]}},
    )
    message = Inbound(channel="telegram", account_id="bot1", text="hi", peer=Peer("direct", "123"))
    assert route(settings, message).session_key == key


def test_under_main_the_owner_keeps_the_main_session_and_only_others_are_rerouted() -> None:
    links = {"alice": ["telegram:123"]}
    settings = _settings([], owner="alice", session={"dmScope": "main", "identityLinks": links})
    owner = route(settings, Inbound(channel="telegram", text="hi", peer=Peer("direct", "123")))
    other = route(settings, Inbound(channel="telegram", text="hi", peer=Peer("direct", "456")))
    assert (owner.session_key, owner.rerouted) == ("agent:main:main", False)
    assert (other.session_key, other.rerouted) == ("agent:main:telegram:direct:456", True)


def test_group_messages_get_a_group_key_whatever_the_dm_scope() -> None:
    settings = _settings([], session={"dmScope": "per-peer"})
    message = Inbound(channel="Slack", account_id="Acme", text="hi", peer=Peer("group", "C42"), sender="u1")
    assert route(settings, message).session_key == "agent:main:slack:acme:group:c42"


def test_bad_ids_in_a_message_are_refused() -> None:
    with pytest.raises(InvalidInput):
        route(_settings([]), Inbound(channel="tele/gram", text="hi", peer=Peer("direct", "1")))
    with pytest.raises(InvalidInput):
        route(_settings([]), Inbound(channel="telegram", text="hi", peer=Peer("direct", "a:b")))
    with pytest.raises(InvalidInput):
        route(_settings([]), Inbound(channel="telegram", text="   ", peer=Peer("direct", "1")))


def test_a_binding_to_an_unsafe_agent_id_is_refused() -> None:
    settings = _settings([{"agentId": "../x", "match": {"channel": "telegram"}}])
    with pytest.raises(InvalidInput):
        route(settings, Inbound(channel="telegram", text="hi", peer=Peer("direct", "1")))
