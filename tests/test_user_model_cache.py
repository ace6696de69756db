"""Converted models live in the user's cache, shared by every home: a second home's first search converts
nothing. Where that cache is (platform convention, read from the CLI's environment), that
`memory.embedding.modelCacheDir` still wins, and that `doctor` finds an interrupted conversion there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from openclaw_cli.config.loading import EmbeddingSettings
from openclaw_cli.core.paths import Home, user_cache_root
from openclaw_cli.memory.embedding.loader import model_cache_dir
from tests.conftest import ROOT, base_env
from tests.memory_helpers import copy_shared_models


def test_the_xdg_cache_home_is_used_when_absolute() -> None:
    env = {"XDG_CACHE_HOME": "/var/cache/u", "HOME": "/home/u"}
    assert user_cache_root(env, "linux") == Path("/var/cache/u/openclaw")
    assert user_cache_root(env, "darwin") == Path("/var/cache/u/openclaw")  # said explicitly: obeyed


def test_a_relative_xdg_cache_home_is_ignored() -> None:
    assert user_cache_root({"XDG_CACHE_HOME": "cache", "HOME": "/home/u"}, "linux") == Path(
        "/home/u/.cache/openclaw"
    )


def test_the_platform_default_without_xdg() -> None:
    assert user_cache_root({"HOME": "/home/u"}, "linux") == Path("/home/u/.cache/openclaw")
    assert user_cache_root({"HOME": "/Users/u"}, "darwin") == Path("/Users/u/Library/Caches/openclaw")
    windows = {"LOCALAPPDATA": "C:/Users/u/AppData/Local", "HOME": "C:/Users/u"}
    assert user_cache_root(windows, "win32") == Path("C:/Users/u/AppData/Local/openclaw/cache")


def test_no_home_directory_keeps_the_models_in_the_home() -> None:
    assert user_cache_root({}, "linux") is None
    assert user_cache_root({"HOME": "relative"}, "linux") is None
    home = Home(Path("/data/oc"), user_cache_root({}, "linux"))
    assert home.model_cache_dir == Path("/data/oc/cache/models") == home.home_model_cache_dir


def test_the_user_cache_holds_the_models_unless_model_cache_dir_says_otherwise() -> None:
    home = Home(Path("/data/oc"), Path("/home/u/.cache/openclaw"))
    assert home.model_cache_dir == Path("/home/u/.cache/openclaw/models")
    assert home.home_model_cache_dir == Path("/data/oc/cache/models")
    assert home.word_cache_dir == Path("/data/oc/cache/words")  # the home's words stay in the home
    assert model_cache_dir(EmbeddingSettings(), home.model_cache_dir) == home.model_cache_dir
    configured = EmbeddingSettings(model_cache_dir="/srv/models")
    assert model_cache_dir(configured, home.model_cache_dir) == Path("/srv/models")


def _env(home: Path, user_cache: Path) -> dict[str, str]:
    env = base_env(home, shared_models=False)  # no modelCacheDir: the product's default
    env["XDG_CACHE_HOME"] = str(user_cache)
    return env


def _cli(home: Path, user_cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "openclaw_cli", *args],
        env=_env(home, user_cache),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done


def _snapshot(directory: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in directory.iterdir()}


def test_a_second_home_converts_nothing(tmp_path: Path) -> None:
    user_cache = tmp_path / "xdg"
    models = user_cache / "openclaw" / "models"
    copy_shared_models(models)  # converted once on this machine, as by an earlier home
    before = _snapshot(models)
    first, second = tmp_path / "first", tmp_path / "second"
    _cli(first, user_cache, "memory", "add", "the allotment shed needs a new padlock")
    added = _cli(second, user_cache, "memory", "add", "the greenhouse vents open at noon", "--json")
    found = _cli(second, user_cache, "memory", "search", "greenhouse vents", "--json")
    assert '"the greenhouse vents open at noon"' in found.stdout and "allotment" not in found.stdout
    assert added.stderr == "" and found.stderr == ""
    after = _snapshot(models)
    # Every converted file is the one that was there (same inode, same mtime): nothing converted again,
    # and no conversion's work directory or new model appeared.
    assert {name: after[name] for name in before} == before
    assert not [n for n in after if n not in before and not n.endswith(".lock")]
    for home in (first, second):
        assert not home.joinpath("cache", "models").exists()
        assert home.joinpath("agents").is_dir()


def test_doctor_finds_leftovers_in_the_user_cache_and_in_the_homes_old_one(tmp_path: Path) -> None:
    home, user_cache = tmp_path / "home", tmp_path / "xdg"
    _cli(home, user_cache, "memory", "list", "--json")  # creates the home
    old = time.time() - 3600
    leftovers = [user_cache / "openclaw" / "models" / ".convert-a1", home / "cache" / "models" / ".convert-b2"]
    for path in leftovers:
        path.mkdir(parents=True, mode=0o700)
        os.utime(path, (old, old))
    report = subprocess.run(
        [sys.executable, "-m", "openclaw_cli", "doctor", "--fix", "--json"],
        env=_env(home, user_cache),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in report.stderr
    found = [f["path"] for f in json.loads(report.stdout)["findings"] if f["check"] == "cache.leftovers"]
    assert sorted(found) == sorted(str(p) for p in leftovers)
    assert not any(p.exists() for p in leftovers)
