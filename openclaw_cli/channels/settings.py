"""The `channels` and `media` sections of openclaw.json (config_models.Settings holds them).

Tokens and secrets are plain strings here; the CLI fills `botToken` from TELEGRAM_BOT_TOKEN / SLACK_BOT_TOKEN
when the file leaves it out (config.py never reads the environment for them itself), and nothing prints them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

DmPolicy = Literal["pairing", "allowlist", "open", "disabled"]
GroupPolicy = Literal["allowlist", "open", "disabled"]


class _Section(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", allow_inf_nan=False
    )


class GroupSettings(_Section):
    require_mention: bool = Field(True, description="answer in this group only when mentioned or replied to")


class AccessSettings(_Section):
    dm_policy: DmPolicy = Field("pairing", description="who may talk to the assistant in a DM")
    allow_from: list[str] = Field(default_factory=list, description="platform user ids allowed to DM")
    group_policy: GroupPolicy = Field("allowlist", description="which groups the assistant answers in")
    group_allow_from: list[str] = Field(
        default_factory=list, description="group chat ids (groupPolicy allowlist) the assistant answers in"
    )
    pairing_ttl_minutes: int = Field(60, ge=1, le=10_080, description="how long a pairing code stays valid")


class TelegramSettings(AccessSettings):
    enabled: bool = False
    bot_token: str | None = Field(None, description="from @BotFather; or TELEGRAM_BOT_TOKEN (never printed)")
    api_base: str = Field("https://api.telegram.org", description="Bot API server (a local one, or a fake)")
    mode: Literal["polling", "webhook"] = "polling"
    webhook_url: str | None = None
    webhook_secret: str | None = None
    poll_timeout_seconds: int = Field(25, ge=0, le=50, description="getUpdates long-poll timeout")
    groups: dict[str, GroupSettings] = Field(default_factory=dict, description="per group chat id")


class SlackSettings(AccessSettings):
    enabled: bool = False
    bot_token: str | None = Field(None, description="xoxb-...; or SLACK_BOT_TOKEN (never printed)")
    signing_secret: str | None = Field(None, description="verifies the Events API requests")
    api_base: str = Field("https://slack.com/api/", description="Web API base (a fake in tests)")
    require_mention: bool = Field(True, description="in channels answer only when mentioned or in a thread")


class PluginChannelSettings(AccessSettings):
    """`channels.<id>` of a channel a plugin registers: the access policy every channel has, `enabled`, and
    the plugin's own keys (kept as given; the channel reads them from `model_extra`)."""

    model_config = ConfigDict(extra="allow")
    enabled: bool = False


class ChannelsSettings(_Section):
    # Any other key is the section of a plugin's channel (plugins/), an object checked when that channel
    # is built: the gateway says which keys no loaded plugin registered.
    model_config = ConfigDict(extra="allow")
    telegram: TelegramSettings = Field(default_factory=TelegramSettings)
    slack: SlackSettings = Field(default_factory=SlackSettings)
    send_retries: int = Field(5, ge=0, le=20, description="retries of a failed send before it is recorded")

    @model_validator(mode="after")
    def _plugin_sections_are_objects(self) -> ChannelsSettings:
        for name, value in (self.model_extra or {}).items():
            if not isinstance(value, dict):
                raise ValueError(f"channels.{name} must be an object (a plugin channel's section)")
        return self

    def plugin_section(self, name: str) -> dict[str, Any] | None:
        """The raw `channels.<name>` of a plugin channel, None when the file has none."""
        value = (self.model_extra or {}).get(name)
        return value if isinstance(value, dict) else None


class MediaSettings(_Section):
    max_bytes: int = Field(20 * 1024 * 1024, ge=1024, description="larger inbound files are refused")
    ttl_days: int = Field(30, ge=1, description="`session sweep` deletes media older than this")
