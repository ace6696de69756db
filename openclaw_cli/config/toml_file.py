"""openclaw.toml: the config in TOML (seed 003 §7: "JSON5/TOML"), read when there is no openclaw.json.

Reading uses the standard library's tomllib; `config set` edits the document with tomlkit, which keeps the
user's comments, key order and layout (only the changed value's text is new). Both files at once would
leave the user guessing which one counts, so that is refused (config.read_config_file calls
`refuse_both`). TOML has no null: a value that is null (`config set session.reset.atHour null`) cannot be
written to it, and the error says to use openclaw.json for that key or to remove it from the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openclaw_cli.core.errors import ConfigError
from openclaw_cli.core.paths import CONFIG_FILENAME, CONFIG_TOML_FILENAME


def is_toml(path: Path) -> bool:
    return path.suffix.lower() == ".toml"


def refuse_both(path: Path) -> None:
    """ConfigError when `path` is one of the home's two config files and the other one exists too."""
    if path.name not in (CONFIG_FILENAME, CONFIG_TOML_FILENAME):
        return
    json_file, toml_file = path.with_name(CONFIG_FILENAME), path.with_name(CONFIG_TOML_FILENAME)
    if json_file.exists() and toml_file.exists():
        raise ConfigError(
            f"both {json_file} and {toml_file} exist: openclaw reads only one",
            hint="merge them into one file and remove the other; nothing was changed",
        )


def config_files(path: Path) -> list[Path]:
    """The files whose change may change the settings read for `path`: both of the home's config files
    (one may appear, or both), or `path` alone when it is not one of them."""
    if path.name not in (CONFIG_FILENAME, CONFIG_TOML_FILENAME):
        return [path]
    return [path.with_name(CONFIG_FILENAME), path.with_name(CONFIG_TOML_FILENAME)]


def current_config(path: Path) -> Path:
    """The file the settings are read from now (as paths.Home.config_file chooses it)."""
    if path.name not in (CONFIG_FILENAME, CONFIG_TOML_FILENAME):
        return path
    json_file, toml_file = path.with_name(CONFIG_FILENAME), path.with_name(CONFIG_TOML_FILENAME)
    return toml_file if not json_file.exists() and toml_file.exists() else json_file


def parse_toml(text: str, path: Path) -> dict[str, Any]:
    """The document as plain data; a syntax error is one line with its line and column (tomllib's)."""
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}", hint="fix the syntax; nothing was changed") from exc
    except RecursionError as exc:
        raise ConfigError(f"{path}: nested too deeply to read", hint="fix or remove the file") from exc


def _without_null(value: Any, key: str) -> None:
    if value is None:
        raise ConfigError(
            f"cannot set '{key}' to null in openclaw.toml: TOML has no null",
            hint="remove the key from the file for its default, or keep this setting in openclaw.json",
        )
    if isinstance(value, dict):
        for name, inner in value.items():
            _without_null(inner, f"{key}.{name}")
    elif isinstance(value, list):
        for inner in value:
            _without_null(inner, key)


def edited_toml_text(old_text: str, parts: list[str], value: Any, expected: dict[str, Any]) -> str:
    """`old_text` with the key at `parts` set to `value`, comments and layout kept (tomlkit)."""
    import tomllib

    import tomlkit

    key = ".".join(parts)
    _without_null(value, key)
    doc = tomlkit.parse(old_text)
    node: Any = doc
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):  # absent (or a scalar the new value replaces): a new table
            child = tomlkit.table()
            node[part] = child
        node = child
    node[parts[-1]] = value  # a whole table given is replaced as a whole, as in openclaw.json
    text = tomlkit.dumps(doc)
    if tomllib.loads(text) != expected:  # tomlkit placed it somewhere it does not read back from
        raise ConfigError(
            f"could not write '{key}' into openclaw.toml without changing other keys",
            hint="edit the file by hand; nothing was changed",
        )
    return text
