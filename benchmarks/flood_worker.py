"""A flood of unfinished requests against a gateway, in a process of its own (in the benchmark's process
its loop would compete with the measuring client for the GIL and inflate what the client measures).

    python -m benchmarks.flood_worker PORT SIZE hold|reconnect

Opens SIZE sockets, each sending part of a request head (half a request line, half the headers, half a
WebSocket upgrade without its token) and nothing more, then prints `ready` on stdout. `hold` leaves them;
`reconnect` opens a new one whenever the gateway closes one. Stops when stdin closes, and prints
{"reopened": N} on stdout. `running` starts it from a benchmark or a test (tests/test_gateway_limits.py).
"""

from __future__ import annotations

import json
import selectors
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PAYLOADS = (
    b"GET /healthz HT",
    b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: half",
    b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n",
)


def _open(port: int, payload: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(payload)
    sock.setblocking(False)
    return sock


def _closed(sock: socket.socket) -> bool:
    try:
        while sock.recv(65536):
            pass
    except BlockingIOError:
        return False
    except OSError:
        return True
    return True


def flood(port: int, size: int, reconnect: bool, stop: threading.Event) -> int:
    """Keep the flood up until `stop`; how many sockets were opened again."""
    selector = selectors.DefaultSelector()
    for n in range(size):
        selector.register(_open(port, PAYLOADS[n % 3]), selectors.EVENT_READ, n % 3)
    print("ready", flush=True)
    reopened = 0
    while not stop.is_set():
        for key, _ in selector.select(timeout=0.1):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            if not _closed(sock):
                continue
            selector.unregister(sock)
            sock.close()
            if reconnect and not stop.is_set():
                selector.register(_open(port, PAYLOADS[key.data]), selectors.EVENT_READ, key.data)
                reopened += 1
    for key in list(selector.get_map().values()):
        key.fileobj.close()  # type: ignore[union-attr]
    return reopened


def main() -> None:
    port, size, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    stop = threading.Event()
    result: list[int] = []
    worker = threading.Thread(target=lambda: result.append(flood(port, size, mode == "reconnect", stop)))
    worker.start()
    sys.stdin.read()  # until the benchmark closes our stdin
    stop.set()
    worker.join()
    print(json.dumps({"reopened": result[0] if result else -1}), flush=True)


@dataclass
class FloodRun:
    process: subprocess.Popen[str]
    reopened: int = -1  # known once the flood has stopped

    def alive(self) -> bool:
        return self.process.poll() is None


@contextmanager
def running(port: int, size: int, mode: str, settle: float = 0.5) -> Iterator[FloodRun]:
    """This flood against `port` ("hold" or "reconnect") in a process of its own while the block runs,
    from `settle` seconds after its sockets are open (past its first burst: the steady state)."""
    worker = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.flood_worker", str(port), str(size), mode],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert worker.stdin is not None and worker.stdout is not None
    run = FloodRun(worker)
    try:
        assert worker.stdout.readline().strip() == "ready"
        time.sleep(settle)
        yield run
    finally:
        worker.stdin.close()
        run.reopened = int(json.loads(worker.stdout.readline() or "{}").get("reopened", -1))
        worker.wait(30)


if __name__ == "__main__":
    main()
