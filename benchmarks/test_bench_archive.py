"""gzip against zstd for archived transcripts (issue 53: "compressed, chosen by measurement").

On realistic transcripts (benchmarks/archive_corpus.py: bilingual, tool calls and their JSON results,
50 to 2,000 lines) for each codec and level: the ratio, compression speed (MB/s of plain JSONL), the time
to read an archive back as `session show` does (decompress and parse every line) against reading the
plain file, and the cost of importing the codec's module in a fresh interpreter (paid by the first read
of an archive in a process, never at start-up: sessions/archive.py is imported lazily by the readers).
The chosen codec (gzip, sessions/archive.py says why) is also timed by pytest-benchmark.

    python -m pytest benchmarks/test_bench_archive.py --benchmark-only -n 0 -s
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import zstandard

from benchmarks.archive_corpus import transcript
from openclaw_cli.sessions.archive import LEVEL
from openclaw_cli.sessions.jsonl import parse_chunk

SIZES = (50, 500, 2000)
ROUNDS = 7
Codec = tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]


def _codecs() -> dict[str, Codec]:
    def zstd(level: int) -> Codec:
        return (
            lambda d: zstandard.ZstdCompressor(level=level).compress(d),
            lambda c: zstandard.ZstdDecompressor().decompress(c),
        )

    def gz(level: int) -> Codec:
        return (lambda d: gzip.compress(d, compresslevel=level, mtime=0), gzip.decompress)

    return {"gzip-6": gz(6), "gzip-9": gz(9), "zstd-3": zstd(3), "zstd-9": zstd(9), "zstd-19": zstd(19)}


def _best(run: Callable[[], Any]) -> float:
    """The fastest of ROUNDS runs: on a shared machine the others measure the neighbours' load."""
    samples = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        run()
        samples.append(time.perf_counter() - start)
    return min(samples)


def _import_ms(module: str) -> float:
    """Cumulative import time of `module` in a fresh interpreter (-X importtime), best of 5."""
    samples = []
    for _ in range(5):
        out = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", f"import {module}"],
            capture_output=True, text=True, check=True,
        ).stderr
        last = [line for line in out.splitlines() if re.search(rf"\|\s+{module}$", line)][-1]
        samples.append(int(last.split("|")[1]) / 1000)
    return round(min(samples), 2)


def measure() -> list[dict[str, Any]]:
    rows = []
    for lines in SIZES:
        plain = transcript(lines)
        plain_read = _best(lambda plain=plain: parse_chunk(plain))
        for name, (compress, decompress) in _codecs().items():
            packed = compress(plain)
            assert decompress(packed) == plain
            seconds = _best(lambda compress=compress, plain=plain: compress(plain))
            read = _best(lambda d=decompress, p=packed: parse_chunk(d(p)))
            unpack = _best(lambda d=decompress, p=packed: d(p))
            rows.append(
                {
                    "lines": lines,
                    "codec": name,
                    "plainKB": round(len(plain) / 1024, 1),
                    "packedKB": round(len(packed) / 1024, 1),
                    "ratio": round(len(plain) / len(packed), 2),
                    "compressMBps": round(len(plain) / seconds / 1e6, 1),
                    "compressMs": round(seconds * 1000, 2),
                    "readMs": round(read * 1000, 2),
                    "decompressMs": round(unpack * 1000, 2),
                    "plainReadMs": round(plain_read * 1000, 2),
                }
            )
    return rows


def test_archive_codecs(benchmark: Any) -> None:
    rows = measure()
    imports = {"gzip": _import_ms("gzip"), "zstandard": _import_ms("zstandard")}
    plain = transcript(2000)
    packed = gzip.compress(plain, compresslevel=LEVEL, mtime=0)
    result = benchmark.pedantic(lambda: parse_chunk(gzip.decompress(packed)), rounds=20, iterations=1)
    print("\nlines codec    plain KB  packed KB  ratio  MB/s   compress ms  read ms  (decompress; plain read)")
    for r in rows:
        print(
            f"{r['lines']:>5} {r['codec']:<8} {r['plainKB']:>8} {r['packedKB']:>10} {r['ratio']:>6} "
            f"{r['compressMBps']:>6} {r['compressMs']:>12} {r['readMs']:>8}  ({r['decompressMs']}; {r['plainReadMs']})"
        )
    print(f"import ms (fresh interpreter, cumulative): {json.dumps(imports)}")
    assert len(result.messages) == 2000 and not result.problems
    assert all(r["ratio"] > 1 for r in rows)
