"""Generated completions and man pages: up to date with the command tree, and usable by the shells."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

GEN = ROOT / "tools" / "gen_docs.py"


def _gen(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(GEN), *args], capture_output=True, text=True, cwd=ROOT, timeout=60
    )


def _top_level_commands() -> list[str]:
    import typer.main

    from openclaw_cli.cli.main import app

    group = typer.main.get_command(app)
    return sorted(name for name, cmd in group.commands.items() if not cmd.hidden)  # type: ignore[attr-defined]


def test_committed_files_match_the_command_tree() -> None:
    result = _gen("--check")
    assert result.returncode == 0, f"run `python tools/gen_docs.py`:\n{result.stderr}"
    assert "Traceback" not in result.stderr


def test_check_lists_a_changed_file_and_a_leftover_page(tmp_path: Path) -> None:
    assert _gen("--out", str(tmp_path)).returncode == 0
    assert _gen("--check", "--out", str(tmp_path)).returncode == 0

    (tmp_path / "completions" / "openclaw.fish").write_text("# edited by hand\n", encoding="utf-8")
    (tmp_path / "man" / "openclaw-removed.1").write_text(".TH OLD 1\n", encoding="utf-8")
    stale = _gen("--check", "--out", str(tmp_path))
    assert stale.returncode == 1
    assert "completions/openclaw.fish" in stale.stderr
    assert "man/openclaw-removed.1" in stale.stderr
    assert "man/openclaw.1" not in stale.stderr

    assert _gen("--out", str(tmp_path)).returncode == 0
    assert not (tmp_path / "man" / "openclaw-removed.1").exists()
    assert _gen("--check", "--out", str(tmp_path)).returncode == 0


def test_check_lists_a_missing_file(tmp_path: Path) -> None:
    assert _gen("--out", str(tmp_path)).returncode == 0
    (tmp_path / "man" / "openclaw-doctor.1").unlink()
    stale = _gen("--check", "--out", str(tmp_path))
    assert stale.returncode == 1
    assert "man/openclaw-doctor.1" in stale.stderr


def test_output_is_deterministic(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    assert _gen("--out", str(first)).returncode == 0
    assert _gen("--out", str(second)).returncode == 0
    files = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    assert files
    for rel in files:
        assert (first / rel).read_bytes() == (second / rel).read_bytes(), rel


def test_bash_script_parses() -> None:
    result = subprocess.run(
        ["bash", "-n", str(ROOT / "completions" / "openclaw.bash")], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def _bash_complete(*words: str) -> list[str]:
    """Run the completion function as bash would for `words` (the last one is being completed)."""
    script = (
        f"source {ROOT / 'completions' / 'openclaw.bash'}\n"
        'COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); _openclaw\n'
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    result = subprocess.run(["bash", "-c", script, "bash", *words], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    return [line for line in result.stdout.splitlines() if line]


def test_bash_completes_top_level_commands() -> None:
    assert _bash_complete("openclaw", "") == _top_level_commands()
    assert _bash_complete("openclaw", "doc") == ["doctor"]


def test_bash_completes_subcommands_after_global_options() -> None:
    assert _bash_complete("openclaw", "--agent", "work", "config", "") == ["get", "path", "set", "show"]


def test_bash_completes_options_of_the_current_command() -> None:
    assert _bash_complete("openclaw", "doctor", "--") == ["--fix", "--json", "--help"]


def test_bash_completes_a_path_value_with_file_names() -> None:
    assert "pyproject.toml" in _bash_complete("openclaw", "--home", "pyproj")


@pytest.mark.parametrize("name", ["_openclaw", "openclaw.fish"])
def test_zsh_and_fish_mention_every_top_level_command(name: str) -> None:
    text = (ROOT / "completions" / name).read_text(encoding="utf-8")
    missing = [cmd for cmd in _top_level_commands() if cmd not in text]
    assert not missing, f"{name} lacks {missing}: run `python tools/gen_docs.py`"


def test_fish_offers_each_top_level_command_at_the_root() -> None:
    text = (ROOT / "completions" / "openclaw.fish").read_text(encoding="utf-8")
    for cmd in _top_level_commands():
        assert f"-n \"__openclaw_at 'openclaw'\" -a {cmd} " in text


def test_every_command_has_a_man_page_with_its_options() -> None:
    import typer.main

    from openclaw_cli.cli.main import app

    root = typer.main.get_command(app)
    pending = [(["openclaw"], root)]
    while pending:
        path, command = pending.pop()
        page = ROOT / "man" / f"{'-'.join(path)}.1"
        assert page.is_file(), page
        text = page.read_text(encoding="utf-8")
        assert text.startswith('.\\" Generated') and "\n.SH NAME\n" in text
        for param in command.params:  # type: ignore[attr-defined]
            for opt in getattr(param, "opts", []):
                if opt.startswith("--") and not getattr(param, "hidden", False):
                    assert opt.replace("-", "\\-") in text, (page.name, opt)
        for name, sub in getattr(command, "commands", {}).items():
            pending.append(([*path, name], sub))
