"""fsutil's process-wide redirection of temp files (model conversions), with threads."""

from __future__ import annotations

import tempfile
import threading
import time
from pathlib import Path

from openclaw_cli.core.fsutil import temp_files_inside


def test_two_threads_redirecting_temp_files_take_turns(tmp_path: Path) -> None:
    """Each block must see its own directory for its whole duration: interleaved, one thread's temp
    files went into the other's directory, which was deleted under them."""
    seen: dict[str, list[str]] = {"a": [], "b": []}
    inside = threading.Barrier(2, timeout=5)

    def convert(name: str) -> None:
        directory = tmp_path / name
        directory.mkdir()
        inside.wait()  # both threads are about to redirect at once
        with temp_files_inside(directory):
            for _ in range(20):
                with tempfile.TemporaryDirectory() as scratch:
                    seen[name].append(str(Path(scratch).parent))
                time.sleep(0.005)

    threads = [threading.Thread(target=convert, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    before = tempfile.gettempdir()
    assert seen == {"a": [str(tmp_path / "a")] * 20, "b": [str(tmp_path / "b")] * 20}
    assert tempfile.tempdir is None or tempfile.gettempdir() == before


def test_a_block_inside_a_block_restores_the_outer_directory(tmp_path: Path) -> None:
    outer, inner = tmp_path / "outer", tmp_path / "inner"
    with temp_files_inside(outer):
        with temp_files_inside(inner):
            assert tempfile.gettempdir() == str(inner)
        assert tempfile.gettempdir() == str(outer)
