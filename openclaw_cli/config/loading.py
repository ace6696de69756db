"""Settings: `openclaw.json` (JSON5), or `openclaw.toml` when there is no JSON file (config_toml.py), overlaid with `OPENCLAW_*` environment variables.

The environment is passed in as a mapping; this module never reads `os.environ` itself.
Keys are camelCase in the file (`session.dmScope`); environment variables use `__` between levels
and are case-insensitive (`OPENCLAW_SESSION__DMSCOPE=per-peer`). The models themselves (each section's
fields, defaults and bounds) live in config_models.py; this module reads, merges, validates and edits, and
re-exports the models so callers import every settings name from here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic.alias_generators import to_camel
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsError,
)

from openclaw_cli.config.models import (
    ENV_PREFIX,
    AgentEntry,
    AgentsSettings,
    BackupSettings,
    Binding,
    BindingMatch,
    ContextSettings,
    DedupSettings,
    EmbeddingSettings,
    ExtractionSettings,
    GatewayAuthSettings,
    GatewayQueueSettings,
    GatewaySettings,
    InjectSettings,
    LlmSettings,
    MemorySettings,
    PeerMatch,
    PostgresSettings,
    QueryExpansionSettings,
    QueueMode,
    ReflectionSettings,
    RerankLanguage,
    RerankSettings,
    ResetSettings,
    SearchSettings,
    SessionSettings,
    Settings,
)
from openclaw_cli.core.errors import ConfigError
from openclaw_cli.core.fsutil import atomic_write_bytes

# The models are re-exported: callers import every settings name from here.
__all__ = [
    "ENV_PREFIX",
    "AgentEntry",
    "AgentsSettings",
    "BackupSettings",
    "Binding",
    "BindingMatch",
    "ContextSettings",
    "DedupSettings",
    "EmbeddingSettings",
    "ExtractionSettings",
    "GatewayAuthSettings",
    "GatewayQueueSettings",
    "GatewaySettings",
    "InjectSettings",
    "LlmSettings",
    "MemorySettings",
    "PostgresSettings",
    "PeerMatch",
    "QueryExpansionSettings",
    "QueueMode",
    "ReflectionSettings",
    "RerankLanguage",
    "RerankSettings",
    "ResetSettings",
    "SearchSettings",
    "SessionSettings",
    "Settings",
    "CLI_ENV_VARS",
    "read_config_file",
    "validate_settings",
    "load_settings",
    "settings_as_dict",
    "get_key",
    "parse_value",
    "set_key",
    "dumps",
]

# Variables that configure the CLI itself rather than a settings key.
CLI_ENV_VARS = frozenset({"OPENCLAW_HOME", "OPENCLAW_AGENT"})


class _MappingEnvSource(EnvSettingsSource):
    """The stock environment source, fed from an explicit mapping instead of os.environ."""

    def __init__(self, settings_cls: type[BaseSettings], env: Mapping[str, str]) -> None:
        self._given_env = {k: v for k, v in env.items() if k.upper() not in CLI_ENV_VARS}
        super().__init__(settings_cls)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return {key.lower(): value for key, value in self._given_env.items()}


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
    """The raw contents of openclaw.json (or openclaw.toml); {} when it does not exist."""
    from openclaw_cli.config.toml_file import is_toml, parse_toml, refuse_both

    refuse_both(path)
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
    if is_toml(path):
        data = parse_toml(text, path)
        _refuse_bad_text(data, str(path))
        return data
    import json5  # only for a file to parse (~5 ms to import; a home without a file reads none)

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
    from openclaw_cli.core.textcheck import HINT, find_bad_text

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
    from openclaw_cli.config.edit import edited_config_text
    from openclaw_cli.config.toml_file import edited_toml_text, is_toml

    old_text = path.read_text(encoding="utf-8") if path.exists() else ""  # read_config_file read it already
    edit = edited_toml_text if is_toml(path) else edited_config_text
    atomic_write_bytes(path, edit(old_text, parts, value, data).encode("utf-8"))
    return settings


def _split_key(key: str) -> list[str]:
    parts = [p for p in key.split(".")]
    if not key or any(not p for p in parts):
        raise ConfigError(f"invalid config key '{key}'", hint="use a dotted key such as session.dmScope")
    return [to_camel(p) if "_" in p else p for p in parts]


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)
