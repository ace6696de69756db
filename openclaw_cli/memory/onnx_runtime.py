"""onnxruntime, imported with its usage telemetry off.

The onnxruntime wheels for Linux and macOS (1.29 on) queue usage events about the process, the machine
and each model loaded in ~/.cache/Microsoft/DeveloperTools/.onnxruntime, leave a `.ses` file in the temp
directory, and upload the events. A memory tool that keeps everything on the user's machine turns that
off. The runtime reads ORT_DISABLE_TELEMETRY once, when it is first imported, so every import of
onnxruntime in this package goes through `runtime()` (or follows a call to it). A user who wants the
telemetry sets the variable to 0.
"""

from __future__ import annotations

import os
from types import ModuleType

TELEMETRY_SWITCH = "ORT_DISABLE_TELEMETRY"


def runtime() -> ModuleType:
    """The onnxruntime module, its telemetry disabled unless the user enabled it explicitly."""
    os.environ.setdefault(TELEMETRY_SWITCH, "1")
    import onnxruntime

    return onnxruntime
