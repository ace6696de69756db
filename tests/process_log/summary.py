"""Summarise a SUITE_PROCESS_LOG file (tests/process_log/sitecustomize.py): CPU seconds by test module
and by command, and what the litellm and onnxruntime imports cost in processes.

    python -m tests.process_log.summary /tmp/processes.jsonl
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

# conftest.InProcessClock's lines: a test's share of its pytest worker's own CPU, which the worker's own
# line at exit (outside a test) counts again, so the total leaves them out.
IN_TEST_PROCESS = "(in the test process)"

# The global options that take a value (`openclaw --help`): skipped with it to reach the command.
GLOBAL_WITH_VALUE = ("--home", "--agent")


def command(argv: list[str]) -> str:
    """`memory add`, `gateway run`, ... for a CLI process; the script or module for any other."""
    if "openclaw_cli" not in argv:
        return "python -c" if "-c" in argv else " ".join(argv[:2])
    words: list[str] = []
    rest = iter(argv[argv.index("openclaw_cli") + 1 :])
    for arg in rest:
        if arg in GLOBAL_WITH_VALUE:
            next(rest, None)
        elif not arg.startswith("-"):
            words.append(arg)
    return " ".join(words[:2]) or "(no command)"


def table(title: str, rows: dict[str, list[float]], limit: int) -> list[str]:
    lines = [f"{title}: processes, cpu s, wall s, with litellm, with onnxruntime"]
    for key, (count, cpu, wall, litellm, onnx) in sorted(rows.items(), key=lambda r: -r[1][1])[:limit]:
        lines.append(f"  {count:5.0f} {cpu:8.1f} {wall:8.1f} {litellm:5.0f} {onnx:5.0f}  {key}")
    return lines


def summarise(records: list[dict[str, Any]], limit: int = 40) -> str:
    by_module: dict[str, list[float]] = defaultdict(lambda: [0.0] * 5)
    by_command: dict[str, list[float]] = defaultdict(lambda: [0.0] * 5)
    for record in records:
        module = record["test"].split("::", 1)[0] or "(outside a test)"
        for row in (by_module[module], by_command[command(record["argv"])]):
            row[0] += 1
            row[1] += record["cpu"]
            row[2] += record["wall"]
            row[3] += record["litellm"]
            row[4] += record["onnxruntime"]
    total_cpu = sum(r["cpu"] for r in records if r["argv"] != [IN_TEST_PROCESS])
    litellm_cpu = sum(r["cpu"] for r in records if r["litellm"])
    processes = sum(1 for r in records if r["argv"] != [IN_TEST_PROCESS])
    lines = [f"{processes} processes, {total_cpu:.0f} cpu s ({litellm_cpu:.0f} in processes with litellm)"]
    return "\n".join(lines + table("by module", by_module, limit) + table("by command", by_command, limit))


def main() -> None:
    records = [json.loads(line) for line in Path(sys.argv[1]).read_text().splitlines() if line.strip()]
    print(summarise(records))


if __name__ == "__main__":
    main()
