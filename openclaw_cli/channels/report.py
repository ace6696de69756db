"""What `openclaw channels list|status` and `openclaw pairing` read without a running gateway.

Nothing here imports a platform library: these commands stay as light as the rest of the CLI.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.channels.access import AccessStore
from openclaw_cli.channels.journal import ChannelJournal, account_dir
from openclaw_cli.core.errors import InvalidInput

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Settings

CHANNELS = ("telegram", "slack")
ACCOUNT = "default"


def check_channel(name: str) -> str:
    wanted = name.strip().lower()
    if wanted not in CHANNELS:
        raise InvalidInput(f"unknown channel {name!r}", hint=f"use one of {', '.join(CHANNELS)}")
    return wanted


def access_store(root: Path, channel: str) -> AccessStore:
    return AccessStore(account_dir(root, check_channel(channel), ACCOUNT))


def configured(settings: Settings, root: Path, env_tokens: Mapping[str, bool]) -> list[dict[str, Any]]:
    """One row per channel account from the config and the state files (the token only as set or not)."""
    rows = []
    for name in CHANNELS:
        section = getattr(settings.channels, name)
        directory = account_dir(root, name, ACCOUNT)
        row: dict[str, Any] = {
            "channel": name,
            "account": ACCOUNT,
            "enabled": section.enabled,
            "mode": getattr(section, "mode", "events"),
            "tokenSet": bool(section.bot_token) or bool(env_tokens.get(name)),
            "dmPolicy": section.dm_policy,
            "groupPolicy": section.group_policy,
            "connected": False,
            "offset": None,
            "pendingSends": 0,
        }
        if directory.exists():
            journal = ChannelJournal(directory, fsync=False)
            row["offset"] = journal.offset()
            row["pendingSends"] = journal.pending_sends()
            row["approvedSenders"] = len(AccessStore(directory).approved())
        rows.append(row)
    return rows


def pairing_rows(root: Path) -> list[dict[str, Any]]:
    rows = []
    for name in CHANNELS:
        for request in access_store(root, name).requests():
            rows.append(
                {"channel": name, **{k: request.get(k) for k in ("code", "sender", "name", "expiresAt")}}
            )
    return rows
