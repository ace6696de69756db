"""Whom an MCP server acts for, and where: one person of one agent of one home (issue 51).

The person is `--user` claimed as at every other entry point (claims.claimed_person: the owner's bare name
is refused, an address linked to the owner is the owner), else the owner. Everything the server reads or
writes is that person's, as `openclaw chat --user` would see it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from openclaw_cli.identity import claims
from openclaw_cli.identity.persons import owner_id

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Settings
    from openclaw_cli.core.paths import Home


@dataclass(frozen=True)
class McpContext:
    home: Home
    agent_id: str
    settings: Settings  # the home's; agent_settings is what this agent sees
    person: str
    owner: bool
    gateway_token: str | None = None  # what a call through the home's gateway sends

    @property
    def agent_settings(self) -> Settings:
        from openclaw_cli.identity.agent_config import for_agent

        return for_agent(self.settings, self.agent_id)

    def gateway_identity(self) -> dict[str, object]:
        """The params that make a gateway call act for this person: the owner is `asOwner` (the gateway
        refuses the owner's bare name as a claim, as this server does), anyone else their `userId`."""
        return {"asOwner": True} if self.owner else {"userId": self.person}


def acting_person(settings: Settings, user: str | None) -> tuple[str, bool]:
    """(person, is the owner) for `--user`; InvalidInput for a claim no entry point accepts."""
    owner = owner_id(settings)
    if user is None:
        return owner, True
    person = claims.claimed_person(user, settings, "--user")
    return person, person == owner
