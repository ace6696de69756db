"""Finding plugins, in a deterministic order: installed packages' entry points (group `openclaw.plugins`,
sorted by name), then `plugins.load.paths` in the order listed. A path is a `.py` file (one plugin, its
id the file's stem), a package folder (with `__init__.py`: one plugin, its id the folder's name) or a plain
folder (every `.py` file and package folder in it, sorted by name). Nothing is imported here: a plugin
that is denied or disabled is never imported.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openclaw_cli.core.errors import OpenclawError

GROUP = "openclaw.plugins"


@dataclass(frozen=True)
class Candidate:
    id: str
    source: str  # "entry-point" or "path"
    where: str  # the entry point's value (module:attr), or the file or folder
    version: str | None
    load: Callable[[], Any]  # imports the plugin; returns the object holding its hooks
    base: Path | None  # the plugin's folder (relative skills paths are under it)


def plugin_id(name: str) -> str:
    """The id a name gives: lower case, `-` for `.` and spaces (validated by the host)."""
    return name.strip().lower().replace(".", "-").replace(" ", "-")


def entry_point_candidates() -> list[Candidate]:
    from importlib.metadata import entry_points

    found: list[Candidate] = []
    for point in sorted(entry_points(group=GROUP), key=lambda p: (p.name, p.value)):
        dist = getattr(point, "dist", None)
        version = getattr(dist, "version", None) if dist is not None else None
        found.append(Candidate(plugin_id(point.name), "entry-point", point.value, version, point.load, None))
    return found


def path_candidates(paths: Sequence[Path]) -> Iterator[Candidate | OpenclawError]:
    for path in paths:
        if path.is_file() and path.suffix == ".py":
            yield _file(path)
        elif path.is_dir() and (path / "__init__.py").is_file():
            yield _package(path)
        elif path.is_dir():
            for child in sorted(path.iterdir(), key=lambda p: p.name):
                if child.name.startswith(("_", ".")):
                    continue
                if child.is_file() and child.suffix == ".py":
                    yield _file(child)
                elif child.is_dir() and (child / "__init__.py").is_file():
                    yield _package(child)
        else:
            yield OpenclawError(
                f"plugins.load.paths: {path} is neither a .py file nor a folder",
                hint="fix the path in openclaw.json, or remove it",
            )


def _file(path: Path) -> Candidate:
    return Candidate(
        plugin_id(path.stem), "path", str(path), None, lambda: _import(path.stem, path, None), path.parent
    )


def _package(path: Path) -> Candidate:
    return Candidate(
        plugin_id(path.name),
        "path",
        str(path),
        None,
        lambda: _import(path.name, path / "__init__.py", [str(path)]),
        path,
    )


def _import(name: str, file: Path, search: list[str] | None) -> Any:
    """Import a plugin from a file, as module `openclaw_plugin_<name>` (kept in sys.modules, so that its
    own imports, relative ones included, and pickling work)."""
    module_name = f"openclaw_plugin_{name.replace('-', '_').replace('.', '_')}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, file, submodule_search_locations=search)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {file}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module
