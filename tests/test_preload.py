"""Loading the embedder ahead, in a background thread (embedding/loader.preload): a later create_embedder
gets what it built, a failure surfaces where the embedder is used, and a one-search process starts the
load as soon as its settings are read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from openclaw_cli.config.loading import EmbeddingSettings, Settings
from openclaw_cli.core.errors import StoreError
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.embedding.loader import create_embedder, model_cache_dir, preload
from openclaw_cli.memory.embedding.use_m3.segmenter import BULK_TEXTS
from openclaw_cli.memory.service import MemoryService
from tests.memory_helpers import shared_model_cache

ROOT = Path(__file__).resolve().parent.parent


def _wait_for_preloads() -> None:
    for thread in threading.enumerate():
        if thread.name == "embedder-preload":
            thread.join()


def test_a_preloaded_embedder_is_the_one_create_embedder_returns() -> None:
    settings = EmbeddingSettings(model="all-MiniLM-L6-v2-int8", threads=1)
    cache = shared_model_cache()
    preload(settings, cache_dir=cache, one_shot=True)
    embedder = create_embedder(settings, one_shot=True, cache_dir=cache)  # waits for the thread's load
    _wait_for_preloads()
    assert create_embedder(settings, one_shot=True, cache_dir=cache) is embedder
    assert embedder.identity.dimensions == 384
    alone = create_embedder(settings, one_shot=True, cache_dir=cache)
    assert np.array_equal(
        alone.embed_query("tea with milk").vector, embedder.embed_query("tea with milk").vector
    )


def test_a_failed_preload_is_reported_where_the_embedder_is_used(tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the model cache should be")
    settings = EmbeddingSettings(model="all-MiniLM-L6-v2-int8", threads=1)
    preload(settings, cache_dir=blocked / "models", one_shot=True)  # raises nothing
    _wait_for_preloads()
    with pytest.raises(StoreError):
        create_embedder(settings, one_shot=True, cache_dir=blocked / "models")
    assert blocked.read_text() == "a file where the model cache should be"


def test_the_model_cache_is_the_configured_one_else_the_homes(tmp_path: Path) -> None:
    home_cache = tmp_path / "home" / "cache" / "models"
    assert model_cache_dir(EmbeddingSettings(), home_cache) == home_cache
    configured = EmbeddingSettings(model_cache_dir="~/elsewhere/models")
    assert model_cache_dir(configured, home_cache) == Path("~/elsewhere/models").expanduser()


def _watched_process(home: Path, *args: str, stdin: str | None = None, code: int = 0) -> list[str]:
    """What one CLI process did, in order: "thread NAME" and "STARTER -> NAME" for each thread started,
    "import records", "import config" and "import json5" when those modules were first imported."""
    script = (
        "import sys, threading, runpy\n"
        "events = []\n"
        "start = threading.Thread.start\n"
        "def watched(self):\n"
        "    events.append('thread ' + self.name)\n"
        "    events.append(threading.current_thread().name + ' -> ' + self.name)\n"
        "    return start(self)\n"
        "threading.Thread.start = watched\n"
        "def audit(event, args):\n"
        "    if event == 'import' and args[0] == 'openclaw_cli.memory.store.records':\n"
        "        events.append('import records')\n"
        "    if event == 'import' and args[0] == 'openclaw_cli.config.loading' and args[0] not in sys.modules:\n"
        "        events.append('import config')\n"
        "    if event == 'import' and args[0] == 'json5' and args[0] not in sys.modules:\n"
        "        events.append('import json5')\n"
        "sys.addaudithook(audit)\n"
        "sys.argv = ['openclaw', *sys.argv[1:]]\n"
        # The CLI leaves through entry.leave (os._exit after the atexit functions): report from one.
        "import atexit\n"
        "atexit.register(lambda: print('\\n'.join(events), file=sys.stderr))\n"
        "runpy.run_module('openclaw_cli', run_name='__main__')\n"
    )
    env = {
        **os.environ,
        "OPENCLAW_HOME": str(home),
        "OPENCLAW_MEMORY__EMBEDDING__MODELCACHEDIR": str(shared_model_cache()),
    }
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        env=env,
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == code, done.stderr
    return [
        line for line in done.stderr.splitlines() if line.startswith(("thread ", "import ")) or " -> " in line
    ]


def _search_process(home: Path, *args: str) -> list[str]:
    """The order in which one `memory search` process starts the model load and imports the searcher."""
    return _watched_process(home, "memory", "search", *args, "--local", "--json")


def test_a_search_process_starts_the_model_load_before_importing_the_records(tmp_path: Path) -> None:
    create_embedder(EmbeddingSettings(), cache_dir=shared_model_cache())  # the models converted once
    events = _search_process(tmp_path / "home", "tea with milk")
    assert events.index("thread embedder-preload") < events.index("import records")


def test_a_bulk_load_starts_the_model_load_before_importing_the_records(tmp_path: Path) -> None:
    create_embedder(EmbeddingSettings(), cache_dir=shared_model_cache())  # the models converted once
    lines = "".join(f'{{"text": "note {n} about the allotment"}}\n' for n in range(3))
    events = _watched_process(tmp_path / "home", "memory", "add", "--batch", "-", stdin=lines)
    assert events.index("thread embedder-preload") < events.index("import records")
    stored = subprocess.run(
        [sys.executable, "-m", "openclaw_cli", "memory", "list", "--json"],
        env={**os.environ, "OPENCLAW_HOME": str(tmp_path / "home")},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert stored.returncode == 0, stored.stderr
    assert sorted(r["l0"] for r in json.loads(stored.stdout)) == [
        f"note {n} about the allotment" for n in range(3)
    ]


def test_a_home_without_a_config_file_imports_no_json5_parser(tmp_path: Path) -> None:
    events = _search_process(tmp_path / "home", "tea with milk", "--mode", "bm25")
    assert "import records" in events and "import json5" not in events


def test_a_json5_config_file_is_still_read(tmp_path: Path) -> None:
    from openclaw_cli.core.paths import CONFIG_FILENAME

    home = tmp_path / "home"
    home.mkdir()
    # JSON5 (a comment, an unquoted key): read, and its value applies (threads 0 is refused).
    (home / CONFIG_FILENAME).write_text("{memory: {embedding: {threads: 0}}}  // JSON5", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "openclaw_cli", "memory", "search", "tea", "--local"],
        env={**os.environ, "OPENCLAW_HOME": str(home)},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0 and "threads" in done.stderr and "Traceback" not in done.stderr


def test_a_keyword_only_search_loads_no_model(tmp_path: Path) -> None:
    events = _search_process(tmp_path / "home", "tea with milk", "--mode", "bm25")
    assert "thread embedder-preload" not in events and "import records" in events


def test_settings_that_do_not_validate_leave_the_searchs_own_checks_first(tmp_path: Path) -> None:
    from openclaw_cli.core.paths import CONFIG_FILENAME

    home = tmp_path / "home"
    home.mkdir()
    (home / CONFIG_FILENAME).write_text('{"memory": {"embedding": {"threads": "lots"}}}')
    env = {**os.environ, "OPENCLAW_HOME": str(home)}

    def search(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "openclaw_cli", "memory", "search", "tea", "--local", *args]
        return subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)

    bad_k = search("-k", "0")
    assert bad_k.returncode == 2 and "0 is not between 1 and" in bad_k.stderr
    bad_settings = search()
    assert bad_settings.returncode != 0 and "threads" in bad_settings.stderr


def test_a_bulk_load_starts_the_full_segmentation_and_a_small_one_does_not(tmp_path: Path) -> None:
    create_embedder(EmbeddingSettings(), cache_dir=shared_model_cache())  # the models converted once
    lines = "".join(f'{{"text": "note number {n} about the garden"}}\n' for n in range(BULK_TEXTS))
    starts = _watched_process(tmp_path / "home", "memory", "add", "--batch", "-", stdin=lines)
    # Started once the models are in: by the preload, the command, or the first chunk, whichever is first.
    assert any(s.endswith(" -> use-m3-vocabulary") for s in starts)
    three = tmp_path / "three.jsonl"  # a small batch: the table segments it
    three.write_text("".join(lines.splitlines(keepends=True)[:3]), encoding="utf-8")
    few = _watched_process(tmp_path / "few", "memory", "add", "--batch", str(three))
    assert "MainThread -> embedder-preload" in few and not any("use-m3-vocabulary" in s for s in few)
    searched = _search_process(tmp_path / "home", "garden")
    assert "MainThread -> embedder-preload" in searched  # one search: its models, not the library
    assert not any(s.endswith("use-m3-vocabulary") for s in searched)


def _garden_lines(count: int, last_newline: bool = True) -> str:
    text = "\n".join(f'{{"text": "note number {n} about the greenhouse"}}' for n in range(count))
    return text + "\n" if last_newline else text


def _stored_texts(home: Path) -> list[str]:
    listed = subprocess.run(
        [sys.executable, "-m", "openclaw_cli", "memory", "list", "--json", "--limit", "1000"],
        env={**os.environ, "OPENCLAW_HOME": str(home)},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert listed.returncode == 0, listed.stderr
    return sorted(r["l0"] for r in json.loads(listed.stdout))


@pytest.mark.parametrize("last_newline", [True, False])
def test_a_bulk_file_starts_the_full_segmentation_before_the_settings_are_read(
    tmp_path: Path, last_newline: bool
) -> None:
    # Until the model sessions build only the main thread runs: the load takes the idle core, not the
    # first chunk's. A file of BULK_TEXTS lines is bulk work, whether its last line ends in a newline.
    create_embedder(EmbeddingSettings(), cache_dir=shared_model_cache())  # the models converted once
    source = tmp_path / "batch.jsonl"
    source.write_text(_garden_lines(BULK_TEXTS, last_newline), encoding="utf-8")
    events = _watched_process(tmp_path / "home", "memory", "add", "--batch", str(source))
    ahead = events.index("MainThread -> use-m3-vocabulary-ahead")
    assert ahead < events.index("import config") < events.index("thread embedder-preload")
    assert len(_stored_texts(tmp_path / "home")) == BULK_TEXTS


def test_a_file_one_line_short_of_bulk_work_loads_nothing_ahead(tmp_path: Path) -> None:
    create_embedder(EmbeddingSettings(), cache_dir=shared_model_cache())  # the models converted once
    source = tmp_path / "batch.jsonl"
    source.write_text(_garden_lines(BULK_TEXTS - 1, last_newline=False), encoding="utf-8")
    events = _watched_process(tmp_path / "home", "memory", "add", "--batch", str(source))
    assert "MainThread -> embedder-preload" in events
    assert not any("use-m3-vocabulary" in e for e in events)


def test_stdin_is_counted_once_read_and_a_pipe_loads_ahead_and_neither_loses_a_line(tmp_path: Path) -> None:
    # Standard input is read whole (each line bounded, issue 48) before any model loads, so its lines are
    # counted as a file's are: 3 lines are no bulk work. A pipe given as a path (`--batch <(jq ...)`) cannot
    # be counted beforehand and must be read once only, by the command, or the lines read to count them
    # would be lost: it loads ahead.
    create_embedder(EmbeddingSettings(), cache_dir=shared_model_cache())  # the models converted once
    from_stdin = _watched_process(tmp_path / "stdin", "memory", "add", "--batch", "-", stdin=_garden_lines(3))
    assert "MainThread -> embedder-preload" in from_stdin
    assert not any("use-m3-vocabulary" in e for e in from_stdin)
    assert len(_stored_texts(tmp_path / "stdin")) == 3
    fifo = tmp_path / "lines.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text(_garden_lines(5), encoding="utf-8"))
    writer.start()
    from_pipe = _watched_process(tmp_path / "pipe", "memory", "add", "--batch", str(fifo))
    writer.join(timeout=60)
    assert "MainThread -> use-m3-vocabulary-ahead" in from_pipe
    assert _stored_texts(tmp_path / "pipe") == sorted(
        f"note number {n} about the greenhouse" for n in range(5)
    )


def test_an_import_loads_the_models_while_it_reads_the_export_and_a_dry_run_loads_none(
    tmp_path: Path,
) -> None:
    from tests.portability_helpers import HEADER, record, write_export

    create_embedder(EmbeddingSettings(), cache_dir=shared_model_cache())  # the models converted once
    texts = [f"note number {n} about the orchard" for n in range(BULK_TEXTS)]
    export = write_export(tmp_path / "e.json", HEADER, [record(f"mem-{n}", t) for n, t in enumerate(texts)])
    checked = _watched_process(tmp_path / "dry", "memory", "import", str(export), "--dry-run")
    assert not any("embedder-preload" in e or "use-m3-vocabulary" in e for e in checked)
    events = _watched_process(tmp_path / "home", "memory", "import", str(export))
    assert events.index("thread embedder-preload") < events.index("import records")
    assert "MainThread -> import-embed_0" in events  # the models embed while the last batch is written
    assert _stored_texts(tmp_path / "home") == sorted(texts)


@pytest.mark.parametrize("command", [("add", "--batch"), ("import",)])
@pytest.mark.parametrize("kind", ["missing", "directory"])
def test_a_path_the_command_refuses_loads_nothing(
    tmp_path: Path, kind: str, command: tuple[str, ...]
) -> None:
    # The one-line error comes at once, not after a load it would never use (joined at exit).
    source = tmp_path / "batch.jsonl"
    if kind == "directory":
        source.mkdir()
    events = _watched_process(tmp_path / "home", "memory", *command, str(source), code=1)
    assert not any("use-m3-vocabulary" in e or "embedder-preload" in e for e in events)


@pytest.mark.parametrize("told_first", [True, False])
def test_the_texts_expected_reach_the_preloaded_embedder_whether_told_before_or_after_it_is_in(
    tmp_path: Path, told_first: bool
) -> None:
    loaded = threading.Event()
    told: list[int] = []

    class Embedder:
        def expect_passages(self, count: int) -> None:
            told.append(count)

    def embedder() -> Embedder:
        loaded.wait(30)
        return Embedder()

    service = MemoryService(Home(tmp_path), "main", Settings().memory)
    service.embedder = embedder  # type: ignore[method-assign,assignment]
    if not told_first:
        loaded.set()
    service.preload_embedder()
    if told_first:
        service.expect_passages(300)
        assert told == []  # the models are not in yet
        loaded.set()
    _wait_for_preloads()
    if not told_first:
        assert told == []  # nothing expected yet
        service.expect_passages(300)
    assert told == [300]
