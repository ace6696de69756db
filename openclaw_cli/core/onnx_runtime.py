"""onnxruntime, imported with its usage telemetry off.

The onnxruntime wheels for Linux and macOS (1.29 on) queue usage events about the process, the machine
and each model loaded in ~/.cache/Microsoft/DeveloperTools/.onnxruntime, leave a `.ses` file in the temp
directory, and upload the events. A memory tool that keeps everything on the user's machine turns that
off. The runtime reads ORT_DISABLE_TELEMETRY once, when it is first imported, so every import of
onnxruntime in this package goes through `runtime()` (or follows a call to it). A user who wants the
telemetry sets the variable to 0.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

TELEMETRY_SWITCH = "ORT_DISABLE_TELEMETRY"


def runtime() -> ModuleType:
    """The onnxruntime module, its telemetry disabled unless the user enabled it explicitly."""
    os.environ.setdefault(TELEMETRY_SWITCH, "1")
    import onnxruntime

    return onnxruntime


_quiet_lock = threading.Lock()
_quiet_depth = 0


@contextmanager
def quiet_quantizer() -> Iterator[None]:
    """Silence the advice onnxruntime's quantizer logs through the root logger, which would reach the
    CLI's stderr. The two packaged models are converted in parallel threads, and logging.disable is
    process-wide: it is lifted when the last conversion ends, not the first."""
    global _quiet_depth
    with _quiet_lock:
        _quiet_depth += 1
        if _quiet_depth == 1:
            logging.disable(logging.WARNING)
    try:
        yield
    finally:
        with _quiet_lock:
            _quiet_depth -= 1
            if _quiet_depth == 0:
                logging.disable(logging.NOTSET)


def move_weights_out(model_path: str, weights_name: str, min_bytes: int) -> None:
    """Rewrite the model at `model_path` with its tensors of `min_bytes` or more in the file `weights_name`
    beside it (ONNX external data): onnxruntime then maps them instead of parsing and copying them out of
    the protobuf, so a session loads several times faster with the same bytes and the same vectors."""
    import onnx

    model = onnx.load(model_path)
    onnx.save_model(
        model,
        model_path,
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=weights_name,
        size_threshold=min_bytes,
    )
