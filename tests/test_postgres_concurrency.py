"""Writers on several machines sharing one postgres memory: two gateway processes with separate homes (as on
two hosts) and plain writer processes (tests/pg_worker.py), all on the real test server.

A memory written through one gateway is found by a search through the other at once; writers that store
the same text at the same time leave one memory and lose none of the others; concurrent FSRS reviews of
one memory lose no increment (N processes x M reviews = N x M more reps)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.conftest import ROOT, SHARED_MODEL_CACHE, base_env
from tests.gateway_helpers import Gateway, request, running_gateway, write_config
from tests.pg_worker import SHARED_TEXT

WRITERS = 3
REVIEWS = 15
ADDS = 6


def _on(dsn: str) -> dict[str, str]:
    return {"OPENCLAW_MEMORY__BACKEND": "postgres", "OPENCLAW_MEMORY__POSTGRES__DSN": dsn}


def _rows(dsn: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn) as conn:
        return conn.execute(sql).fetchall()  # type: ignore[arg-type]


@pytest.fixture
def two_gateways(tmp_path: Path, pg_dsn: str) -> Iterator[tuple[Gateway, Gateway]]:
    """Two gateways, each with its own home (two machines), sharing the memory on one server."""
    with ExitStack() as stack:
        gateways = []
        for name in ("host-a", "host-b"):
            home = tmp_path / name
            write_config(home, None, llm={"model": None}, memory={"extraction": {"enabled": False}})
            gateways.append(stack.enter_context(running_gateway(home, env=_on(pg_dsn))))
        yield gateways[0], gateways[1]


def _call(gateway: Gateway, method: str, params: dict[str, Any]) -> Any:
    with gateway.ws() as conn:
        response = request(conn, method, params, timeout=120)
    assert response["ok"], response
    return response["payload"]


def test_a_write_through_one_gateway_is_found_through_the_other_at_once(
    two_gateways: tuple[Gateway, Gateway],
) -> None:
    first, second = two_gateways
    assert _call(second, "memory.search", {"query": "kayak"})["results"] == []  # warm, and empty
    added = _call(first, "memory.add", {"text": "Keeps a red kayak in the garage", "category": "event"})
    found = _call(second, "memory.search", {"query": "red kayak"})["results"]
    assert [hit["id"] for hit in found] == [added["id"]]
    _call(second, "memory.delete", {"id": added["id"]})
    assert _call(first, "memory.search", {"query": "red kayak"})["results"] == []


def test_gateways_adding_the_same_text_at_once_keep_one_and_lose_nothing(
    two_gateways: tuple[Gateway, Gateway], pg_dsn: str
) -> None:
    def write(job: tuple[Gateway, str]) -> str:
        gateway, text = job
        return str(_call(gateway, "memory.add", {"text": text})["id"])

    jobs = [(gateway, SHARED_TEXT) for gateway in two_gateways for _ in range(ADDS)]
    jobs += [
        (gateway, f"Fact {n} told to {i}") for i, gateway in enumerate(two_gateways) for n in range(ADDS)
    ]
    with ThreadPoolExecutor(len(jobs)) as pool:
        ids = list(pool.map(write, jobs))
    shared, own = set(ids[: 2 * ADDS]), ids[2 * ADDS :]
    assert len(shared) == 1  # every writer was told of the one stored copy
    stored = _rows(pg_dsn, "SELECT id, l0 FROM openclaw_main.records WHERE deleted = 0")
    assert sorted(record_id for record_id, _ in stored) == sorted({*shared, *own})
    assert len(stored) == 1 + 2 * ADDS


def _workers(home: Path, dsn: str, *jobs: tuple[str, str, int]) -> list[dict[str, Any]]:
    """Run one tests/pg_worker.py process per job at once; their JSON reports."""
    env = base_env(home)
    processes = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.pg_worker",
                action,
                str(home / f"w{n}"),
                dsn,
                what,
                str(count),
                str(SHARED_MODEL_CACHE),
            ],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )  # fmt: skip
        for n, (action, what, count) in enumerate(jobs)
    ]
    reports = []
    for process in processes:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err.decode(errors="replace")
        reports.append(json.loads(out))
    return reports


def test_concurrent_reviews_in_several_processes_lose_no_increment(tmp_path: Path, pg_dsn: str) -> None:
    [added] = _workers(tmp_path, pg_dsn, ("add", "Owner", 1))
    record_id = added["ids"][0]
    reports = _workers(tmp_path, pg_dsn, *[("review", record_id, REVIEWS)] * WRITERS)
    assert [r["reviewed"] for r in reports] == [REVIEWS] * WRITERS
    assert _rows(pg_dsn, f"SELECT fsrs_reps FROM openclaw_main.records WHERE id = '{record_id}'") == [
        (WRITERS * REVIEWS,)
    ]


def test_writer_processes_storing_the_same_text_keep_one_copy(tmp_path: Path, pg_dsn: str) -> None:
    reports = _workers(tmp_path, pg_dsn, *[("add", f"Writer{n}", ADDS) for n in range(WRITERS)])
    assert len({tuple(r["shared"]) for r in reports}) == 1 and len(reports[0]["shared"]) == 1
    live = _rows(pg_dsn, "SELECT id FROM openclaw_main.records WHERE deleted = 0")
    assert sorted(i for (i,) in live) == sorted(
        {*reports[0]["shared"], *(i for r in reports for i in r["ids"])}
    )
    assert len(live) == 1 + WRITERS * ADDS
