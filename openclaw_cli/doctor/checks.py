"""`openclaw doctor`: health checks over one home and agent, each problem a Finding with a fix hint.

The checks never print and never read the environment: the caller passes the home, the agent,
the environment mapping (for OPENCLAW_* config overrides) and whether to repair what can be repaired.
"""

from __future__ import annotations

import importlib.util
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from openclaw_cli.core.errors import OpenclawError
from openclaw_cli.core.findings import Finding
from openclaw_cli.core.fsutil import DIR_MODE, FILE_MODE
from openclaw_cli.core.paths import Home

if TYPE_CHECKING:
    from openclaw_cli.config.loading import Settings
    from openclaw_cli.memory.store.persons import StorePersons

PERMISSIONS = "home.permissions"
WORKSPACE_PERMISSIONS = "workspace.permissions"
CONFIG = "config"
DM_SCOPE = "session.dmScope"
MEMORY = "memory"
_MEMORY_CHECK_MODULE = "openclaw_cli.memory.checks"


def run_checks(home: Home, agent: str, env: Mapping[str, str], fix: bool) -> list[Finding]:
    """Every check, in order: permissions, config, sessions, memory (when that check is installed)."""
    return run_doctor(home, agent, env, fix).findings


@dataclass
class DoctorReport:
    findings: list[Finding]
    # Whose memories each store under the home holds (memory/store/persons.py), every agent's and the shared one.
    persons: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": not has_errors(self.findings),
            "findings": [f.to_dict() for f in self.findings],
            "persons": self.persons,
        }


def run_doctor(home: Home, agent: str, env: Mapping[str, str], fix: bool) -> DoctorReport:
    """`openclaw doctor`: every check (permissions, config, sessions, memory), then the persons with
    memories in every store and a warning where conversations wrote memories under `default`."""
    findings = check_permissions(home, fix)
    settings, config_findings = check_config(home, env)
    findings += config_findings
    findings += check_dm_scope(home, settings)
    findings += check_workspace_permissions(home, settings, fix)
    if settings is not None:
        from openclaw_cli.channels.checks import check_channels

        findings += check_channels(settings, env)
        from openclaw_cli.plugins.report import check_plugins

        findings += check_plugins(settings, home.root)
    findings += _check_sessions(home, agent, fix)
    findings += check_model_leftovers(home, fix, settings)
    findings += _check_memory(home, agent, settings, fix)
    persons: list[dict[str, Any]] = []
    if settings is not None:
        from openclaw_cli.memory.store.persons import findings_for

        stores = _persons_of_every_store(home, settings)
        findings += findings_for(stores, shared=settings.memory.share_user_memory)
        persons = [store.to_dict() for store in stores]
    return DoctorReport(findings, persons)


def check_dm_scope(home: Home, settings: Settings | None) -> list[Finding]:
    """What dmScope does with other people's DMs: counted reroutes out of the owner's main session (claims.py,
    sessions/reroutes.py), and the explicitly shared main session, where everyone sees everyone's words."""
    from openclaw_cli.sessions.keys import SHARED_MAIN
    from openclaw_cli.sessions.reroutes import read_reroutes, reroutes_path

    findings: list[Finding] = []
    scope = settings.session.dm_scope if settings is not None else None
    if scope == SHARED_MAIN:
        message = (
            f"session.dmScope is {SHARED_MAIN}: every DM shares the main session, so each person sees what "
            "the others said"
        )
        hint = "use main (the owner's; others get their own session) or per-channel-peer"
        findings.append(Finding(DM_SCOPE, "warning", message, hint))
    path = str(reroutes_path(home.root))
    for agent, entry in sorted(read_reroutes(home.root).items()):
        message = (
            f"agent {agent}: {entry['count']} message(s) from people other than the owner went to their "
            "own session (a DM: its per-channel-peer session) instead of the main session, which is the "
            f"owner's (last at {entry['lastAt']})"
        )
        if scope == "main":  # the old meaning of main: the operator may not know that it changed
            hint = (
                "set session.dmScope to per-channel-peer to make this the rule, or "
                f"{SHARED_MAIN} to share one session"
            )
            findings.append(Finding(DM_SCOPE, "warning", message, hint, path))
        else:
            findings.append(Finding(DM_SCOPE, "ok", message, path=path))
    return findings


def _persons_of_every_store(home: Home, settings: Settings) -> list[StorePersons]:
    """Whose memories each store holds, on the configured backend (the files, or the server's schemas)."""
    from openclaw_cli.identity.persons import DEFAULT_OWNER, owner_id
    from openclaw_cli.memory.backends import store_source
    from openclaw_cli.memory.store.persons import every_store

    try:
        source = store_source(home, settings.memory)
    except OpenclawError as error:  # no DSN: the memory check says so
        from openclaw_cli.memory.store.persons import EVERY_AGENT, StorePersons

        return [StorePersons(EVERY_AGENT, "", error=error.message)]
    return every_store(home, source, owner_is_default=owner_id(settings) == DEFAULT_OWNER)


LEFTOVERS = "cache.leftovers"
CONVERT_PREFIX = ".convert-"
LEFTOVER_AGE_S = 300  # a conversion takes seconds; younger directories may belong to a running one


def _model_cache_dirs(home: Home, settings: Settings | None) -> list[Path]:
    """The user's model cache, the home's cache/models/ (where models were converted before there was a
    user cache) and, when `memory.embedding.modelCacheDir` points elsewhere, that directory too."""
    directories = [home.model_cache_dir, home.home_model_cache_dir]
    configured = settings.memory.embedding.model_cache_dir if settings is not None else None
    if configured:
        directories.append(Path(configured).expanduser())
    return [d for d in dict.fromkeys(directories) if d.is_dir()]


def check_model_leftovers(home: Home, fix: bool, settings: Settings | None = None) -> list[Finding]:
    """`.convert-*` directories left by a killed model conversion (derived data only), in cache/models/
    and in the configured model cache directory (where conversions run when one is configured)."""
    import shutil
    import time

    findings: list[Finding] = []
    now = time.time()
    leftovers = [p for d in _model_cache_dirs(home, settings) for p in sorted(d.glob(f"{CONVERT_PREFIX}*"))]
    for path in leftovers:
        try:
            if now - path.lstat().st_mtime < LEFTOVER_AGE_S:
                continue
        except FileNotFoundError:
            continue
        if fix:
            shutil.rmtree(path, ignore_errors=True) if path.is_dir() else path.unlink(missing_ok=True)
        message = "left over by an interrupted model conversion" + ("; removed" if fix else "")
        findings.append(Finding(LEFTOVERS, "warning", message, "run `openclaw doctor --fix`", str(path), fix))
    return findings


def has_errors(findings: list[Finding]) -> bool:
    """True when an error is left that `--fix` did not repair (warnings do not count)."""
    return any(f.severity == "error" and not f.fixed for f in findings)


# --- permissions -----------------------------------------------------------------------------------


def check_permissions(home: Home, fix: bool) -> list[Finding]:
    """The root and every directory under it must be 0700, every regular file 0600.

    Symbolic links are neither followed nor changed: chmod on a link would alter its target,
    which may lie outside the home.
    """
    root = home.root
    if not root.exists():
        return [Finding(PERMISSIONS, "ok", f"{root} does not exist yet (nothing stored)", path=str(root))]
    if not root.is_dir():
        return [
            Finding(
                PERMISSIONS,
                "error",
                f"{root} is not a directory",
                hint="move the file away or point OPENCLAW_HOME / --home at a directory",
                path=str(root),
            )
        ]
    return _check_tree(root, fix, PERMISSIONS)


def check_workspace_permissions(home: Home, settings: Settings | None, fix: bool) -> list[Finding]:
    """A workspace configured outside the home (`memory.workspace`, or an agent's own in `agents.list`)
    holds the same private notes, so it gets the same check; inside the home it was already checked with
    the rest. A workspace several agents share is checked once."""
    if settings is None:
        return []
    from openclaw_cli.memory.workspace.files import workspace_dir

    configured = [settings.memory.workspace, *(entry.workspace for entry in settings.agents.entries)]
    roots: list[Path] = []
    for value in configured:
        if not value:
            continue
        root = workspace_dir(home, "main", settings.memory.model_copy(update={"workspace": value}))
        if root.is_dir() and not root.resolve().is_relative_to(home.root.resolve()) and root not in roots:
            roots.append(root)
    return [finding for root in roots for finding in _check_tree(root, fix, WORKSPACE_PERMISSIONS)]


def _check_tree(root: Path, fix: bool, check: str) -> list[Finding]:
    findings: list[Finding] = []
    counted = 0
    for path, expected in _private_entries(root):
        counted += 1
        problem = _mode_problem(path, expected, fix, check)
        if problem is not None:
            findings.append(problem)
    if not findings:
        message = f"{counted} entries under {root} are private (0700/0600)"
        findings.append(Finding(check, "ok", message, path=str(root)))
    return findings


def _private_entries(root: Path) -> Iterator[tuple[Path, int]]:
    """(path, expected mode) for the root, each directory and each regular file below it, sorted."""
    yield root, DIR_MODE
    for current, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        base = Path(current)
        for name in sorted(filenames):
            path = base / name
            if _is_regular_file(path):
                yield path, FILE_MODE
        for name in dirnames:
            path = base / name
            if not path.is_symlink():
                yield path, DIR_MODE


def _is_regular_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except FileNotFoundError:  # removed while we walked (e.g. a temp file renamed into place)
        return False


def _mode_problem(path: Path, expected: int, fix: bool, check: str = PERMISSIONS) -> Finding | None:
    try:
        actual = stat.S_IMODE(path.lstat().st_mode)
    except FileNotFoundError:  # removed while we walked: nothing to check
        return None
    if actual == expected:
        return None
    kind = "directory" if expected == DIR_MODE else "file"
    message = f"{kind} has mode {actual:04o}, expected {expected:04o}"
    hint = f"run `openclaw doctor --fix` or `chmod {expected:o} {path}`"
    if not fix:
        return Finding(check, "error", message, hint=hint, path=str(path))
    try:
        os.chmod(path, expected)
    except OSError as exc:
        return Finding(
            check,
            "error",
            f"{message}; chmod failed: {exc.strerror}",
            hint="check who owns the file (`ls -l`) and fix it as that user",
            path=str(path),
        )
    return Finding(check, "error", f"{message}; changed to {expected:04o}", path=str(path), fixed=True)


# --- config ----------------------------------------------------------------------------------------


def check_config(home: Home, env: Mapping[str, str]) -> tuple[Settings | None, list[Finding]]:
    """Parse and validate openclaw.json with the OPENCLAW_* overrides; the settings when they are valid."""
    from openclaw_cli.config.loading import load_settings

    path = home.config_file
    try:
        settings = load_settings(path, env)
    except OpenclawError as error:
        return None, [Finding(CONFIG, "error", error.message, hint=error.hint, path=str(path))]
    message = f"{path} is valid" if path.exists() else f"{path} does not exist: defaults are in use"
    return settings, [Finding(CONFIG, "ok", message, path=str(path))]


# --- sessions and memory (checks owned by those packages) ------------------------------------------


def _check_sessions(home: Home, agent: str, fix: bool) -> list[Finding]:
    from openclaw_cli.sessions.upkeep.check import check_sessions

    return list(check_sessions(home, agent, fix))


def _check_memory(home: Home, agent: str, settings: Settings | None, fix: bool) -> list[Finding]:
    # The memory check is optional: it exists only once the memory package provides it.
    if importlib.util.find_spec("openclaw_cli.memory") is None:
        return []
    if importlib.util.find_spec(_MEMORY_CHECK_MODULE) is None:
        return []
    if settings is None:
        return [
            Finding(
                MEMORY,
                "warning",
                "memory not checked: the configuration is invalid",
                hint="fix the config error above, then run `openclaw doctor` again",
            )
        ]
    from openclaw_cli.memory.checks import check_memory  # type: ignore[import-not-found,unused-ignore]

    return list(check_memory(home, agent, settings, fix))
