"""`openclaw completion SHELL` and `openclaw man [COMMAND]`: the repository's generated files, at run time,
from an installed package alone."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from openclaw_cli import __version__
from openclaw_cli.cli.main import app
from openclaw_cli.docgen.files import SHELLS
from openclaw_cli.docgen.man import render_man
from openclaw_cli.docgen.tree import app_tree
from tests.conftest import ROOT, base_env, run_cli


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package alone, as pip installs it: no tools/, completions/ or man/ next to it."""
    site = tmp_path_factory.mktemp("site")
    shutil.copytree(
        ROOT / "openclaw_cli", site / "openclaw_cli", ignore=shutil.ignore_patterns("__pycache__")
    )
    return site


def _run_installed(site: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = base_env(home)
    env["PYTHONPATH"] = str(site)
    return subprocess.run(
        [sys.executable, "-m", "openclaw_cli", *args],
        env=env,
        cwd=site,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_the_generated_script_without_the_repository(
    installed: Path, tmp_path: Path, shell: str
) -> None:
    done = _run_installed(installed, tmp_path / "home", "completion", shell)
    assert done.returncode == 0, done.stderr
    assert done.stdout == SHELLS[shell](app_tree(app))
    assert not (tmp_path / "home").exists()  # printing a script writes nothing


def _bash_complete(script: str, *words: str) -> list[str]:
    program = f'{script}\nCOMP_WORDS=("$@"); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 )); _openclaw\nprintf "%s\\n" "${{COMPREPLY[@]}}"\n'
    result = subprocess.run(["bash", "-c", program, "bash", *words], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    return [line for line in result.stdout.splitlines() if line]


def test_bash_completion_offers_option_values(tmp_path: Path) -> None:
    script = run_cli(tmp_path / "home", "completion", "bash").stdout
    assert _bash_complete(script, "openclaw", "memory", "search", "--mode", "") == [
        "hybrid",
        "bm25",
        "vector",
    ]
    assert _bash_complete(script, "openclaw", "memory", "search", "--mode", "b") == ["bm25"]
    assert "preference" in _bash_complete(script, "openclaw", "memory", "add", "-c", "")
    assert _bash_complete(script, "openclaw", "memory", "list", "-c", "in") == ["insight"]
    assert "note" in _bash_complete(script, "openclaw", "memory", "")


def test_fish_and_zsh_scripts_offer_mode_and_category_values(tmp_path: Path) -> None:
    fish = run_cli(tmp_path / "home", "completion", "fish").stdout
    assert "-l mode -x -a 'hybrid bm25 vector'" in fish
    assert "-s c -l category -x -a 'profile preference event case lesson insight note'" in fish
    zsh = run_cli(tmp_path / "home", "completion", "zsh").stdout
    assert "('openclaw memory search|--mode') reply=('hybrid' 'bm25' 'vector')" in zsh


def test_completion_of_an_unknown_shell_is_a_usage_error(tmp_path: Path) -> None:
    done = run_cli(tmp_path / "home", "completion", "tcsh")
    assert done.returncode == 2
    assert "unknown shell 'tcsh': use bash, zsh or fish" in done.stderr


def test_man_prints_the_page_of_a_command_without_the_repository(installed: Path, tmp_path: Path) -> None:
    done = _run_installed(installed, tmp_path / "home", "man", "memory", "search")
    assert done.returncode == 0, done.stderr
    tree = app_tree(app)
    [memory] = [c for c in tree.children if c.name == "memory"]
    [search] = [c for c in memory.children if c.name == "search"]
    assert done.stdout == render_man(search, __version__)


def test_man_without_a_command_prints_the_main_page(tmp_path: Path) -> None:
    done = run_cli(tmp_path / "home", "man")
    assert done.returncode == 0
    assert done.stdout == render_man(app_tree(app), __version__)
    assert ".SH COMMANDS" in done.stdout and "openclaw\\-completion" in done.stdout


def test_man_of_an_unknown_command_is_a_usage_error(tmp_path: Path) -> None:
    done = run_cli(tmp_path / "home", "man", "memory", "nope")
    assert done.returncode == 2
    assert "no command 'openclaw memory nope'" in done.stderr and "search" in done.stderr
