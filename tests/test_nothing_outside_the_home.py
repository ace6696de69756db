"""Everything the CLI writes stays in its home: nothing in the user's home directory or the temp directory.
(The converted models go to the user's cache by default, tests/test_user_model_cache.py; here, as in every
test, `memory.embedding.modelCacheDir` names the run's shared one.)

Two libraries write outside by default: onnxruntime queues usage telemetry in ~/.cache/Microsoft and a
`.ses` file in the temp directory (openclaw_cli/core/onnx_runtime.py turns that off), and tiktoken copies the BPE
files it reads into $TMPDIR/data-gym-cache (sessions/budget/tokens.py reads them itself).
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


def test_the_float_vector_scan_loads_onnxruntime_with_telemetry_off(tmp_path: Path) -> None:
    """An API embedder's store has float vectors, searched warm (the gateway) through an int8 scan built
    with onnxruntime before any local model is loaded: that import must go through onnx_runtime too."""
    import subprocess
    import sys

    script = (
        "import os, numpy as np\n"
        "from openclaw_cli.memory.store.vectors.int8_scan import Int8Scan\n"
        "scan = Int8Scan.build(np.eye(4, dtype=np.float32))\n"
        "print(scan is not None, os.environ.get('ORT_DISABLE_TELEMETRY'))\n"
    )
    env = {"HOME": str(tmp_path), "TMPDIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "1"]
    assert _everything_under(tmp_path) == []
