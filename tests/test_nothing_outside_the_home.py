"""Everything the CLI writes stays in its home: nothing in the user's home directory or the temp directory.

Two libraries write outside by default: onnxruntime queues usage telemetry in ~/.cache/Microsoft and a
`.ses` file in the temp directory (memory/onnx_runtime.py turns that off), and tiktoken copies the BPE
files it reads into $TMPDIR/data-gym-cache (sessions/tokens.py reads them itself).
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli


def _everything_under(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


def test_embedding_searching_and_counting_tokens_write_only_inside_the_home(tmp_path: Path) -> None:
    home, user_home, temp = tmp_path / "home", tmp_path / "user", tmp_path / "tmp"
    user_home.mkdir()
    temp.mkdir()
    env = {"HOME": str(user_home), "TMPDIR": str(temp)}
    for args in (
        ("memory", "add", "prefers dark mode in every editor"),
        ("memory", "search", "which colour theme does he like in his editor"),
        ("memory", "add", "--batch", "-"),
        ("session", "append", "agent:main:main", "what theme do I use?"),
        ("session", "context", "agent:main:main", "--budget", "100"),
    ):
        stdin = '{"text": "用户对海鲜过敏"}\n' if "--batch" in args else None
        result = run_cli(home, *args, input=stdin, env=env)
        assert result.returncode == 0, (args, result.stderr)
    assert _everything_under(user_home) == []
    assert _everything_under(temp) == []
    # The commands did their work: the memories are there, the context was counted.
    assert len(run_cli(home, "memory", "list", "--json", env=env).json()) == 2
