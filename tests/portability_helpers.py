"""Helpers for the export/import tests: memory services over real files whose embedder is a local fake."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from openclaw_cli.config.loading import Settings
from openclaw_cli.core.paths import Home
from openclaw_cli.memory.embedding.onnx_embedder import EmbedderIdentity, QueryEmbedding
from openclaw_cli.memory.portability.files import open_export
from openclaw_cli.memory.portability.transfer import ImportReport, export_memories, import_memories
from openclaw_cli.memory.service import MemoryService
from tests.conftest import Result, base_env
from tests.fake_embedder import CompositeFake


class SmallFake:
    """Another embedder than CompositeFake (another identity and width), deterministic per text."""

    def __init__(self, dimensions: int = 64) -> None:
        self.dimensions = dimensions
        self.calls = 0

    @property
    def identity(self) -> EmbedderIdentity:
        return EmbedderIdentity("fake", f"small-{self.dimensions}", self.dimensions)

    def vector(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
        v = np.random.default_rng(seed).normal(size=self.dimensions)
        return (v / np.linalg.norm(v)).astype(np.float32)

    def embed_passages(self, texts: Sequence[str]) -> Any:
        self.calls += 1
        return (
            np.stack([self.vector(t) for t in texts]) if texts else np.zeros((0, self.dimensions), np.float32)
        )

    def embed_query(self, text: str) -> QueryEmbedding:
        return QueryEmbedding(vector=self.vector(text), unknown_share=0.0)


class FakeService(MemoryService):
    """A MemoryService over real SQLite files whose embedder is `fake` instead of a model."""

    def __init__(self, home: Path, fake: Any = None, settings: Settings | None = None) -> None:
        super().__init__(Home(home), "main", (settings or Settings()).memory)
        self.fake = fake if fake is not None else CompositeFake()

    def embedder(self) -> Any:
        return self.fake


def export_text(service: MemoryService, kind: str = "json", **filters: Any) -> str:
    out = io.BytesIO()
    export_memories(service, out, kind=kind, **filters)  # type: ignore[arg-type]
    return out.getvalue().decode("utf-8")


def write_export(path: Path, header: dict[str, Any], records: list[Any]) -> Path:
    path.write_text(json.dumps({**header, "records": records}, ensure_ascii=False), encoding="utf-8")
    return path


def import_file(service: MemoryService, path: Path, **options: Any) -> ImportReport:
    return import_memories(service, open_export(path), **options)


def record(record_id: str, l0: str, **fields: Any) -> dict[str, Any]:
    """A record in the export format with only what is required, plus `fields`."""
    return {"id": record_id, "content": {"l0": l0}, "createdAt": "2025-03-01T08:00:00.000Z", **fields}


HEADER = {"version": "1.0", "agent": "main", "exportedAt": "2026-01-01T00:00:00.000Z", "embedder": None}


def run_shell(script: str, home: Path, cwd: Path, timeout: float = 120) -> Result:
    """Run `script` with bash in `cwd`, OPENCLAW_HOME=home; `oc ARGS` in it is the real openclaw CLI."""
    env = base_env(home)
    env["OC_PYTHON"] = sys.executable
    prelude = 'set -u\noc() { "$OC_PYTHON" -m openclaw_cli "$@"; }\n'
    proc = subprocess.run(
        ["bash", "-c", prelude + script], env=env, cwd=cwd, capture_output=True, timeout=timeout
    )
    return Result(
        proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
    )
