"""`openclaw doctor`'s channel checks: config that would leave a channel silent or open to anyone."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from openclaw_cli.core.findings import Finding

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Settings

CHECK = "channels"
TOKEN_VARS = {"telegram": "TELEGRAM_BOT_TOKEN", "slack": "SLACK_BOT_TOKEN"}


def check_channels(settings: Settings, env: Mapping[str, str]) -> list[Finding]:
    """One finding per problem (never a token's value); an ok line per enabled channel without one."""
    findings: list[Finding] = []
    for name, variable in TOKEN_VARS.items():
        section = getattr(settings.channels, name)
        if not section.enabled:
            continue
        found: list[Finding] = []
        key = f"channels.{name}"
        if not (section.bot_token or env.get(variable)):
            found.append(
                Finding(
                    CHECK,
                    "error",
                    f"{key} is enabled but has no bot token",
                    hint=f"set {key}.botToken or {variable}",
                )
            )
        if name == "telegram" and section.mode == "webhook":
            if not section.webhook_url:
                found.append(Finding(CHECK, "error", f"{key}.mode is webhook but webhookUrl is not set"))
            if not section.webhook_secret:
                found.append(
                    Finding(
                        CHECK,
                        "error",
                        f"{key}.webhookUrl has no webhookSecret: anyone could post updates to it",
                        hint=f"set {key}.webhookSecret to a long random string",
                    )
                )
        if name == "slack" and not section.signing_secret:
            found.append(Finding(CHECK, "error", f"{key} has no signingSecret: events cannot be verified"))
        if section.dm_policy == "allowlist" and not section.allow_from:
            found.append(
                Finding(
                    CHECK,
                    "warning",
                    f"{key}.dmPolicy is allowlist but allowFrom is empty: only senders approved by pairing "
                    "before are answered",
                    hint=f"add user ids to {key}.allowFrom, or use dmPolicy pairing",
                )
            )
        findings += found or [Finding(CHECK, "ok", f"{key}: enabled, dmPolicy {section.dm_policy}")]
    return findings
