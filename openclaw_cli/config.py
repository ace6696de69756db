"""Settings: `openclaw.json` (JSON5) overlaid with `OPENCLAW_*` environment variables.

The environment is passed in as a mapping; this module never reads `os.environ` itself.
Keys are camelCase in the file (`session.dmScope`); environment variables use `__` between levels
and are case-insensitive (`OPENCLAW_SESSION__DMSCOPE=per-peer`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from openclaw_cli.errors import ConfigError
from openclaw_cli.fsutil import atomic_write_bytes

ENV_PREFIX = "OPENCLAW_"
# Variables that configure the CLI itself rather than a settings key.
CLI_ENV_VARS = frozenset({"OPENCLAW_HOME", "OPENCLAW_AGENT"})


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


class SessionSettings(_Section):
    dm_scope: Literal["main", "per-peer", "per-channel-peer", "per-account-channel-peer"] = "main"
    identity_links: dict[str, list[str]] = Field(default_factory=dict)
    fsync: Literal["always", "interval", "never"] = "interval"
    fsync_interval_ms: int = Field(1000, ge=1)
    dormant_minutes: int = Field(60, ge=1, description="idle time after which an active session is dormant")
    reset: ResetSettings = Field(default_factory=ResetSettings)
    context: ContextSettings = Field(default_factory=ContextSettings)

    @field_validator("identity_links")
    @classmethod
    def _one_person_per_address(cls, links: dict[str, list[str]]) -> dict[str, list[str]]:
        from openclaw_cli.errors import OpenclawError
        from openclaw_cli.person_ids import validate_links

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
    # Converting the packaged models takes ~10 s once; several homes (or a test suite) can share the result.
    model_cache_dir: str | None = Field(
        None, description="where converted local models are cached; default $OPENCLAW_HOME/cache/models"
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


class MemorySettings(_Section):
    share_user_memory: bool = False
    max_text_chars: int = Field(16000, ge=100)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    extraction: ExtractionSettings = Field(default_factory=ExtractionSettings)
    dedup: DedupSettings = Field(default_factory=DedupSettings)
    inject: InjectSettings = Field(default_factory=InjectSettings)
    reflection: ReflectionSettings = Field(default_factory=ReflectionSettings)
    backup: BackupSettings = Field(default_factory=BackupSettings)
    workspace: str | None = Field(
        None,
        description="every agent's workspace unless its agents.list entry names one; default "
        "agents/<id>/workspace; `~` expands, a relative path is under the home",
    )


class LlmSettings(_Section):
    """The chat model, reached through litellm; keys come from the providers' usual environment variables."""

    model: str | None = Field(None, description="e.g. openai/gpt-4o-mini; none means no model is used")
    extract_model: str | None = Field(None, description="a cheaper model for extraction; default `model`")
    api_base: str | None = None
    timeout_seconds: float = Field(60, gt=0)
    max_retries: int = Field(2, ge=0, le=10)
    context_tokens: int = Field(8192, ge=512, description="the model's context window, in tokens")


QueueMode = Literal["collect", "followup", "queue", "steer", "steer-backlog", "interrupt"]


class GatewayQueueSettings(_Section):
    """What a session's lane does with a message that arrives while it is busy (gateway/lanes.py)."""

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


class _MappingEnvSource(EnvSettingsSource):
    """The stock environment source, fed from an explicit mapping instead of os.environ."""

    def __init__(self, settings_cls: type[BaseSettings], env: Mapping[str, str]) -> None:
        self._given_env = {k: v for k, v in env.items() if k.upper() not in CLI_ENV_VARS}
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return {key.lower(): value for key, value in self._given_env.items()}


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


def _settings_class(env: Mapping[str, str]) -> type[Settings]:
    class _Bound(Settings):
        @classmethod
        def settings_customise_sources(
            cls,
            settings_cls: type[BaseSettings],
            init_settings: PydanticBaseSettingsSource,
            env_settings: PydanticBaseSettingsSource,
            dotenv_settings: PydanticBaseSettingsSource,
            file_secret_settings: PydanticBaseSettingsSource,
        ) -> tuple[PydanticBaseSettingsSource, ...]:
            return (_MappingEnvSource(settings_cls, env), init_settings)

    return _Bound


def read_config_file(path: Path) -> dict[str, Any]:
    """The raw contents of openclaw.json; {} when it does not exist."""
    import json5

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason})", hint="fix or remove the file") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from exc
    if not text.strip():
        return {}
    try:
        data = json5.loads(text)
    except RecursionError as exc:  # the parser recurses once per level: a hostile file can exhaust it
        raise ConfigError(
            f"{path}: nested too deeply to read", hint="fix or remove the file; nothing was changed"
        ) from exc
    except ValueError as exc:
        raise ConfigError(
            f"{path}: invalid JSON5: {exc}", hint="fix the syntax; nothing was changed"
        ) from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be an object, not {type(data).__name__}")
    _refuse_bad_text(data, str(path))
    return data


def _refuse_bad_text(value: Any, where: str) -> None:
    """A lone surrogate escape parses, but no setting can hold it (it cannot be printed or written)."""
    from openclaw_cli.textcheck import HINT, find_bad_text

    bad = find_bad_text(value)
    if bad is not None:
        at = f": key '{bad.path}'" if bad.path else ""
        raise ConfigError(f"{where}{at} holds {bad.problem}", hint=f"{HINT}; nothing was changed")


def _describe(exc: ValidationError, path: Path, *, from_env: bool) -> ConfigError:
    first = exc.errors()[0]
    key = ".".join(to_camel(str(part)) for part in first["loc"])
    where = f"{path} or {ENV_PREFIX}* environment" if from_env else str(path)
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return ConfigError(
        f"{where}: key '{key}': {str(first['msg']).removeprefix('Value error, ')}{more}",
        hint="fix the value with `openclaw config set KEY VALUE` or edit the file; nothing was changed",
    )


def _describe_env(exc: SettingsError, env: Mapping[str, str]) -> ConfigError:
    """pydantic-settings names only the field whose variable is not JSON; name the variable too."""
    match = re.search(r'field "(\w+)"', str(exc))
    field = match.group(1) if match else ""
    prefix = f"{ENV_PREFIX}{field.upper()}"
    names = sorted(k for k in env if k.upper() == prefix or k.upper().startswith(prefix + "__"))
    variable = names[0] if names else f"{ENV_PREFIX}*"
    return ConfigError(
        f"environment variable {variable}: not a valid JSON value for key '{to_camel(field)}'",
        hint='unset it, or give a JSON object such as \'{"fsync": "always"}\'',
    )


def validate_settings(data: dict[str, Any], env: Mapping[str, str], path: Path) -> Settings:
    has_env = any(k.upper().startswith(ENV_PREFIX) and k.upper() not in CLI_ENV_VARS for k in env)
    try:
        settings = _settings_class(env)(**data)
    except ValidationError as exc:
        raise _describe(exc, path, from_env=has_env) from exc
    except SettingsError as exc:  # an OPENCLAW_* variable for a section holds something that is not JSON
        raise _describe_env(exc, env) from exc
    except RecursionError as exc:
        raise ConfigError(f"{path}: nested too deeply to validate", hint="fix or remove the file") from exc
    if has_env:  # the file was checked as it was read; a variable's JSON may spell a lone surrogate too
        _refuse_bad_text(settings_as_dict(settings), f"{path} or {ENV_PREFIX}* environment")
    return settings


def load_settings(path: Path, env: Mapping[str, str]) -> Settings:
    """Settings from `path` (JSON5, may be absent) with `env` overrides applied."""
    return validate_settings(read_config_file(path), env, path)


def settings_as_dict(settings: Settings) -> dict[str, Any]:
    return settings.model_dump(by_alias=True, mode="json")


def get_key(settings: Settings, key: str) -> Any:
    """The value at a dotted camelCase key, e.g. `session.reset.atHour`."""
    node: Any = settings_as_dict(settings)
    for part in _split_key(key):
        if not isinstance(node, dict) or part not in node:
            raise ConfigError(f"unknown config key '{key}'", hint="see `openclaw config show` for the keys")
        node = node[part]
    return node


def parse_value(text: str) -> Any:
    """A value from the command line: JSON5 if it parses (numbers, true, null, objects), else the string."""
    import json5

    try:
        return json5.loads(text)
    except ValueError:
        return text


def set_key(path: Path, key: str, value: Any, env: Mapping[str, str]) -> Settings:
    """Set `key` in the config file, validating the result before anything is written."""
    parts = _split_key(key)
    defaults = settings_as_dict(Settings.model_construct())
    node_defaults: Any = defaults
    for part in parts:
        if not isinstance(node_defaults, dict) or part not in node_defaults:
            raise ConfigError(f"unknown config key '{key}'", hint="see `openclaw config show` for the keys")
        node_defaults = node_defaults[part]
    data = read_config_file(path)
    node = data
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    _refuse_bad_text(value, f"the value for '{key}'")
    node[parts[-1]] = value
    settings = validate_settings(data, {}, path)
    from openclaw_cli.config_edit import edited_config_text

    old_text = path.read_text(encoding="utf-8") if path.exists() else ""  # read_config_file read it already
    atomic_write_bytes(path, edited_config_text(old_text, parts, value, data).encode("utf-8"))
    return settings


def _split_key(key: str) -> list[str]:
    parts = [p for p in key.split(".")]
    if not key or any(not p for p in parts):
        raise ConfigError(f"invalid config key '{key}'", hint="use a dotted key such as session.dmScope")
    return [to_camel(p) if "_" in p else p for p in parts]


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)
