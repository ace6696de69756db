"""A process that only embeds: the second reference of the bulk-load benchmark.

    python -m benchmarks.embedding_process FILE

Reads the settings as the CLI does (the home's config file and the OPENCLAW_* variables), loads the
configured models, embeds the `text` of every JSON line of FILE in one call and prints how many it embedded.
Timed as a whole process beside `memory add --batch` on the same lines, it tells what any process pays
before its first vector (interpreter, settings, model sessions) from what the CLI adds to it (validation,
records, dedup, history, the keyword and vector indexes). The benchmark's goal is still set against the
warm in-process reference; this one says how much of the gap a process cannot avoid.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from openclaw_cli.entry import prepare_process

prepare_process()  # as a command's process is, before the heavy imports below

from openclaw_cli.config.loading import load_settings  # noqa: E402
from openclaw_cli.core.paths import Home  # noqa: E402
from openclaw_cli.memory.embedding.loader import create_embedder, model_cache_dir  # noqa: E402


def main(source: Path) -> None:
    started = time.perf_counter()
    home = Home(Path(os.environ["OPENCLAW_HOME"]))
    settings = load_settings(home.config_file, os.environ).memory.embedding
    embedder = create_embedder(settings, cache_dir=model_cache_dir(settings, home.model_cache_dir))
    texts = [json.loads(line)["text"] for line in source.read_text(encoding="utf-8").splitlines() if line]
    loaded = time.perf_counter()
    vectors = embedder.embed_passages(texts)
    done = time.perf_counter()
    print(json.dumps({"embedded": len(vectors), "loaded_s": loaded - started, "embedding_s": done - loaded}))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
