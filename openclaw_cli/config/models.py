"""The settings models: one pydantic model per section of `openclaw.json`, and `Settings`, the whole file.

Each field's default, bounds and description live here; reading the file, overlaying the environment and
editing keys live in config.py, which re-exports every name here for its callers.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator
from pydantic.alias_generators import to_camel
from pydantic_settings import BaseSettings, SettingsConfigDict

from openclaw_cli.channels.settings import ChannelsSettings, MediaSettings
from openclaw_cli.scheduler.settings import CronSettings

ENV_PREFIX = "OPENCLAW_"


class _Section(BaseModel):
    # JSON5 spells Infinity and NaN: no setting means either (a timeout of Infinity never fires, NaN
    # compares false with every bound), so every float setting refuses them.
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", allow_inf_nan=False
    )


class ResetSettings(_Section):
    at_hour: int | None = Field(4, ge=0, le=23, description="daily reset hour, local time; null disables")
    idle_minutes: int | None = Field(None, ge=1, description="reset after this much idle time; null disables")


class ContextSettings(_Section):
    summary_threshold: int = Field(30, ge=2, description="summarise past this many unsummarised messages")
    summary_ratio: float = Field(0.75, gt=0, le=1, description="or past this share of the history budget")
    prune_strategy: Literal["sliding", "importance"] = Field(
        "sliding",
        description="what stays when the history does not fit: the newest messages (sliding), or the last "
        "turns and then instructions, decisions and facts before small talk (importance)",
    )
    keep_recent_turns: int = Field(
        4, ge=1, le=1000, description="importance: the last turns always kept whole, as sliding would"
    )


class ArchiveSettings(_Section):
    compress: bool = Field(
        True, description="compress an archived session's transcript (messages.jsonl.gz); read as before"
    )


class SessionSettings(_Section):
    # `main` is the owner's session; another person's DM goes to their own per-channel-peer session (claims.py).
    # main-shared-by-everyone puts every DM in the main session, where everyone sees everyone's words.
    dm_scope: Literal[
        "main", "main-shared-by-everyone", "per-peer", "per-channel-peer", "per-account-channel-peer"
    ] = "main"
    identity_links: dict[str, list[str]] = Field(default_factory=dict)
    fsync: Literal["always", "interval", "never"] = "interval"
    fsync_interval_ms: int = Field(1000, ge=1)
    dormant_minutes: int = Field(60, ge=1, description="idle time after which an active session is dormant")
    reset: ResetSettings = Field(default_factory=ResetSettings)
    context: ContextSettings = Field(default_factory=ContextSettings)
    archive: ArchiveSettings = Field(default_factory=ArchiveSettings)

    @field_validator("identity_links")
    @classmethod
    def _one_person_per_address(cls, links: dict[str, list[str]]) -> dict[str, list[str]]:
        from openclaw_cli.core.errors import OpenclawError
        from openclaw_cli.identity.person_ids import validate_links

        try:
            validate_links(links)
        except OpenclawError as exc:
            raise ValueError(exc.message) from exc
        return links


class EmbeddingSettings(_Section):
    provider: Literal["local", "onnx", "litellm"] = "local"
    model: str | None = None
    path: str | None = None
    api_base: str | None = None
    dimensions: int | None = Field(None, ge=1)
    batch_size: int = Field(100, ge=1, le=2048)
    max_retries: int = Field(5, ge=0, le=20)
    pooling: Literal["mean", "cls"] = "mean"
    query_prefix: str = ""
    passage_prefix: str = ""
    threads: int = Field(2, ge=1, le=64)
    redact: bool | None = Field(
        None,
        description="mask e-mail addresses, phone, card- and id-like numbers in what an API embedder is sent "
        "(the stored text is unchanged); default on for provider litellm, local models send nothing",
    )
    # Converting the packaged models takes ~10 s once; every home of the user shares the result by default,
    # and jieba's dictionary cache with it (not the searched words' vectors: those are the home's,
    # Home.word_cache_dir).
    model_cache_dir: str | None = Field(
        None,
        description="where converted local models and jieba's dictionary cache are kept; default the "
        "user's cache shared by every home ($XDG_CACHE_HOME/openclaw/models, else ~/.cache/openclaw/models)",
    )


RerankLanguage = Literal["en", "zh", "mixed", "other"]


class RerankSettings(_Section):
    provider: Literal["none", "onnx", "litellm"] = "none"
    model: str | None = None
    path: str | None = None
    api_base: str | None = None
    top_n: int = Field(20, ge=1, le=200)
    # A cross-encoder trained on one language hurts others (an English one dragged Chinese from 13/13 to
    # 10/13 here): it only re-scores query-memory pairs in these languages; empty means every pair.
    languages: list[RerankLanguage] = Field(default_factory=lambda: list[RerankLanguage](["en"]))


def _factor(default: float, what: str) -> Any:
    """A relevance factor in [0, 1] for the kind of memory `what` describes."""
    return Field(default, ge=0, le=1, description=f"relevance factor of {what}")


class SearchSettings(_Section):
    """Search settings. The embedder-dependent values come from the profile of the embedder that built the
    database (memory/search/profiles.py, chosen by measurement on fixtures/eval); a value set here overrides it."""

    candidates: int = Field(50, ge=1, le=1000, description="candidates taken from each leg")
    relevance_floor: float | None = Field(None, ge=0, le=1, description="results below are left out")
    sentence_floor: float | None = Field(
        None, ge=0, le=1, description="the floor for a query of four or more terms"
    )
    cos_floor: float | None = Field(None, ge=-1, le=1, description="similarity where relevance starts")
    cos_full: float | None = Field(None, ge=-1, le=1, description="similarity where relevance is 1")
    lexical_weight: float | None = Field(None, ge=0, le=1)
    semantic_weight: float | None = Field(None, ge=0, le=1)
    english_weight: float | None = Field(None, ge=0, le=1, description="English leg of a two-model vector")
    unknown_token_threshold: float | None = Field(None, ge=0, le=1)
    unmatched_floor: float | None = Field(
        None, ge=0, le=1, description="the floor for a query none of whose words any memory holds"
    )
    hub_weight: float | None = Field(
        None, ge=0, le=1, description="share of a memory's closeness to all memories taken off its similarity"
    )
    # Measured on the eval set (real searcher), facts / turns: 0.5 / 0.5 MRR 0.751; 0.3 / 0.5 0.758, with
    # paraphrase 0.41 -> 0.45 and conversation 0.648 -> 0.655; 0.3 / 0.4 0.755; 0.3 / 0.7 0.757. Below 0.3
    # for facts MRR gains 0.001 but Chinese recall@10 falls from 0.80 to 0.75.
    other_person_factor: float = _factor(0.3, "a memory about someone the query does not name")
    other_person_turn_factor: float = _factor(
        0.5, "a stored dialogue turn that names someone else: the user's own words, naming others in passing"
    )
    question_factor: float = _factor(0.5, "a memory that only asks")
    assistant_factor: float = _factor(0.4, "a stored turn the assistant said")
    answer_kind_factor: float = _factor(
        0.7, "a memory holding no time, quantity, place or name when the query asks for one"
    )
    rerank: RerankSettings = Field(default_factory=RerankSettings)


class ExtractionSettings(_Section):
    """When memories are extracted from conversations (seed 000 §6.1)."""

    enabled: bool = True
    coalesce_seconds: float = Field(30, ge=0, description="turns within this window share one extraction")
    max_per_hour: int = Field(10, ge=1, description="extractions per session per hour")


class DedupSettings(_Section):
    """Semantic dedup zones. Unset values come from the embedder's profile (memory/search/profiles.py)."""

    new_below: float | None = Field(None, ge=-1, le=1, description="similarity below which a memory is new")
    duplicate_above: float | None = Field(
        None, ge=-1, le=1, description="similarity above which it is a duplicate"
    )
    neighbours: int = Field(5, ge=1, le=50, description="nearest memories compared")


class InjectSettings(_Section):
    memory_max_tokens: int = Field(3000, ge=50, description="budget of the memory block, tiktoken tokens")
    expand_top: int = Field(3, ge=0, le=50, description="top results shown with their L1 detail")
    top_k: int = Field(20, ge=1, le=200)


class QueryExpansionSettings(_Section):
    """A weak query expanded by the model before injection and the memory_search tool (issue 24;
    memory/search/legs/expansion.py says when it is asked). On by default when a model is configured: it only
    runs when the local search found nothing strong, costs one short call, the answer is cached, and it
    sends the user's own words to the provider the conversation already goes to, nothing more."""

    enabled: bool = Field(
        True, description="ask the model (llm.extractModel, else llm.model) when search is weak"
    )
    timeout_seconds: float = Field(
        5, gt=0, le=60, description="the call's timeout; past it, the local result"
    )


class ReflectionSettings(_Section):
    min_unreflected: int = Field(50, ge=1, description="a run is due at this many unreflected memories")
    interval_hours: float = Field(
        24, gt=0, description="or when this much time has passed since the last run"
    )
    max_insights: int = Field(5, ge=1, le=20, description="insights per category group")


class BackupSettings(_Section):
    """Rolling daily copies of each memory database (memory/upkeep/backup.py)."""

    keep_days: int = Field(
        7,
        ge=0,
        le=3650,
        description="days of daily memory backups kept; 0 writes none (migrations still copy)",
    )


class PostgresSettings(_Section):
    dsn: str | None = Field(
        None,
        description="the server of memory.backend postgres, e.g. postgresql://user@host/db; a password "
        "comes from here or PGPASSWORD and is never printed",
    )

    @field_serializer("dsn")
    def _masked(self, dsn: str | None) -> str | None:
        """Every dump of the settings (`config show`, `config get`) shows the DSN without its password."""
        from openclaw_cli.core.dsn import mask_dsn

        return None if dsn is None else mask_dsn(dsn)


class MemorySettings(_Section):
    backend: Literal["sqlite", "postgres"] = Field(
        "sqlite", description="where memory lives: one SQLite file per agent, or PostgreSQL with pgvector"
    )
    postgres: PostgresSettings = Field(default_factory=PostgresSettings)
    share_user_memory: bool = False
    max_text_chars: int = Field(16000, ge=100)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    extraction: ExtractionSettings = Field(default_factory=ExtractionSettings)
    dedup: DedupSettings = Field(default_factory=DedupSettings)
    inject: InjectSettings = Field(default_factory=InjectSettings)
    query_expansion: QueryExpansionSettings = Field(default_factory=QueryExpansionSettings)
    reflection: ReflectionSettings = Field(default_factory=ReflectionSettings)
    backup: BackupSettings = Field(default_factory=BackupSettings)
    workspace: str | None = Field(
        None,
        description="every agent's workspace unless its agents.list entry names one; default "
        "agents/<id>/workspace; `~` expands, a relative path is under the home",
    )


SECRET_MASK = "***"


def _api_key_field(whose: str) -> Any:
    return Field(
        None,
        description=f"the API key of {whose} (never printed); default the provider's environment variable, "
        "such as OPENAI_API_KEY; a server on loopback needs none",
    )


class LlmSettings(_Section):
    """The chat model, reached through litellm (`openai/` models through the openai package directly); the
    key is `apiKey`, else the provider's usual environment variable; a server on loopback needs none."""

    model: str | None = Field(None, description="e.g. openai/gpt-4o-mini; none means no model is used")
    extract_model: str | None = Field(None, description="a cheaper model for extraction; default `model`")
    api_base: str | None = Field(
        None, description="where the model is served, e.g. http://127.0.0.1:8080/v1 for a local server"
    )
    api_key: str | None = _api_key_field("llm.apiBase's server (or the provider)")
    timeout_seconds: float = Field(60, gt=0)
    max_retries: int = Field(2, ge=0, le=10)
    context_tokens: int = Field(8192, ge=512, description="the model's context window, in tokens")

    @field_serializer("api_key")
    def _masked(self, key: str | None) -> str | None:
        """Every dump of the settings (`config show`, `config get`) hides the key."""
        return None if key is None else SECRET_MASK


QueueMode = Literal["collect", "followup", "queue", "steer", "steer-backlog", "interrupt"]


class GatewayQueueSettings(_Section):
    """What a session's lane does with a message that arrives while it is busy (gateway/lanes/queues.py)."""

    mode: QueueMode = "collect"
    debounce_ms: int = Field(1000, ge=0, le=600_000, description="collect: quiet time before a merged turn")


class GatewayAuthSettings(_Section):
    max_failures: int = Field(
        10, ge=1, description="wrong or missing tokens per client (host) within the window, then 429"
    )
    window_seconds: float = Field(
        60, gt=0, description="how long a failure counts; the right token is never refused"
    )


class GatewaySettings(_Section):
    port: int = Field(18789, ge=1, le=65535)
    bind: Literal["loopback", "lan"] = "loopback"
    max_message_bytes: int = Field(
        1_048_576, ge=1024, le=67_108_864, description="largest WebSocket frame or HTTP body accepted"
    )
    config_poll_ms: int = Field(500, ge=50, description="how often openclaw.json is checked for changes")
    header_timeout_seconds: float = Field(
        10, gt=0, le=600, description="a connection that has not sent a whole request head by then is closed"
    )
    max_pending_connections: int = Field(
        256,
        ge=1,
        le=65_536,
        description="connections without a whole request head yet; past it the oldest close",
    )
    queue: GatewayQueueSettings = Field(default_factory=GatewayQueueSettings)
    auth: GatewayAuthSettings = Field(default_factory=GatewayAuthSettings)
    anonymous_is_owner: bool = Field(
        False, description="a message with no identity (an anonymous /v1 call) is the owner's"
    )


class SkillsSettings(_Section):
    """SKILL.md instruction sets (openclaw_cli/skills/): how much of them reaches the model."""

    # 4000 characters is ~1,000 tokens (~4 characters a token), an eighth of the default 8192-token window
    # (llm.contextTokens): 40-odd skills with whole descriptions, ~70 with shortened ones, the rest said
    # to be left out; a bigger window can afford a bigger list.
    max_prompt_chars: int = Field(
        4000, ge=200, le=200_000, description="budget of the skills list in the system prompt, characters"
    )
    max_file_bytes: int = Field(
        262_144, ge=1024, le=16_777_216, description="a bigger SKILL.md is refused with an error, not read"
    )
    # ~3,000 tokens: a skill's instructions fit with room for the conversation in the default window.
    max_read_chars: int = Field(
        12_000, ge=500, le=1_000_000, description="characters of a skill body skill_read or /skill gives"
    )


class AgentEntry(_Section):
    """One agent's own settings; each given value wins over the global one (agent_config.for_agent)."""

    id: str = Field(min_length=1, max_length=128)
    name: str | None = None
    workspace: str | None = Field(None, description="this agent's workspace; wins over memory.workspace")
    model: str | None = Field(None, description="this agent's chat model; wins over llm.model")
    api_base: str | None = Field(
        None, description="where this agent's model is served; wins over llm.apiBase"
    )
    extract_model: str | None = Field(
        None, description="this agent's extraction model; default its own model when it sets one"
    )
    api_key: str | None = _api_key_field("this agent's apiBase (with none: llm.apiKey)")
    skills: list[str] | None = Field(
        None, description="the only skills this agent may use, by name; default every available skill"
    )
    tools: list[str] | None = Field(
        None, description="the plugin tools offered to this agent's model, by name; null: every plugin tool"
    )

    @field_serializer("api_key")
    def _masked(self, key: str | None) -> str | None:
        return None if key is None else SECRET_MASK


class McpSettings(_Section):
    """`openclaw mcp` (issue 51)."""

    token: str | None = Field(
        None,
        min_length=16,
        description="bearer token of `openclaw mcp --http` (never printed); default the gateway token",
    )

    @field_serializer("token")
    def _masked(self, token: str | None) -> str | None:
        return None if token is None else SECRET_MASK


class AgentsSettings(_Section):
    max_concurrent: int = Field(4, ge=1, le=256, description="runs at once across every session")
    default: str = Field("main", min_length=1, max_length=128, description="agent of unrouted messages")
    # `list` in the file (seed 003 §5.2); a Python field named `list` would hide the builtin here.
    entries: list[AgentEntry] = Field(default_factory=lambda: list[AgentEntry](), alias="list")


class PeerMatch(_Section):
    kind: Literal["direct", "group", "channel"] = "direct"
    id: str = Field(min_length=1)


class BindingMatch(_Section):
    """What an inbound message must carry for a binding to apply; every given field must match."""

    channel: str | None = None
    account_id: str | None = None
    peer: PeerMatch | None = None
    parent_peer: PeerMatch | None = None
    guild_id: str | None = None
    roles: list[str] | None = None
    team_id: str | None = None


class Binding(_Section):
    agent_id: str = Field(min_length=1, max_length=128)
    match: BindingMatch = Field(default_factory=BindingMatch)


PassphraseSource = Literal["env", "prompt", "keyring"]


class SecuritySettings(_Section):
    """Encryption at rest (openclaw security init): where the passphrase of an encrypted home comes from."""

    passphrase_sources: list[PassphraseSource] = Field(
        default_factory=lambda: list[PassphraseSource](["env", "prompt", "keyring"]),
        min_length=1,
        description="tried in this order: OPENCLAW_PASSPHRASE, a prompt on a terminal, the OS keyring",
    )
    encrypt_workspace: bool = Field(
        False,
        description="seal MEMORY.md and the daily logs too (read and edit them with `openclaw memory notes`; "
        "no other editor or grep can)",
    )
    unlock_minutes: float = Field(
        15,
        gt=0,
        le=7 * 24 * 60,
        description="how long `openclaw security unlock` keeps the key (without --for)",
    )


class PluginLoadSettings(_Section):
    paths: list[str] = Field(
        default_factory=list,
        description="plugin files (.py) or folders (a package, or a folder of plugins), loaded in this order; "
        "`~` expands, a relative path is under the home",
    )


class PluginEntry(_Section):
    """One plugin's settings (plugins.entries.<id>)."""

    enabled: bool = True
    config: dict[str, Any] = Field(
        default_factory=dict, description="the plugin's own settings, validated by its config model at load"
    )
    allow_conversation_access: bool = Field(
        False, description="the plugin's event hooks see message text, tool arguments and results"
    )
    hook_timeout_seconds: float | None = Field(
        None, gt=0, le=600, description="this plugin's hook timeout; default plugins.hookTimeoutSeconds"
    )


class PluginsSettings(_Section):
    """Plugins (openclaw_cli/plugins/): installed ones (entry points `openclaw.plugins`) and `load.paths`."""

    enabled: bool = Field(True, description="false loads no plugin at all")
    allow: list[str] | None = Field(None, description="only these plugin ids load; null: every plugin")
    deny: list[str] = Field(default_factory=list, description="these plugin ids never load (wins over allow)")
    load: PluginLoadSettings = Field(default_factory=PluginLoadSettings)
    entries: dict[str, PluginEntry] = Field(default_factory=dict, description="per plugin id")
    hook_timeout_seconds: float = Field(
        5,
        gt=0,
        le=600,
        description="a hook running longer is abandoned for that call and counted as an error",
    )


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        case_sensitive=False,
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        allow_inf_nan=False,
    )

    owner: str | None = Field(
        None,
        min_length=1,
        max_length=128,
        description="the assistant's owner: an identityLinks name or channel:peer",
    )
    session: SessionSettings = Field(default_factory=SessionSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    llm: LlmSettings = Field(default_factory=LlmSettings)
    gateway: GatewaySettings = Field(default_factory=GatewaySettings)
    agents: AgentsSettings = Field(default_factory=AgentsSettings)
    bindings: list[Binding] = Field(default_factory=list)
    channels: ChannelsSettings = Field(default_factory=ChannelsSettings)
    media: MediaSettings = Field(default_factory=MediaSettings)
    security: SecuritySettings = Field(default_factory=SecuritySettings)
    skills: SkillsSettings = Field(default_factory=SkillsSettings)
    plugins: PluginsSettings = Field(default_factory=PluginsSettings)
    cron: CronSettings = Field(default_factory=CronSettings)  # the gateway's own jobs (scheduler/)
    mcp: McpSettings = Field(default_factory=McpSettings)
