"""The ground floor every other package stands on: the home's on-disk layout and name checks (paths.py),
private directories, atomic replacement and durable appends (fsutil.py), files written where the user says
(output_file.py), the domain errors the CLI maps to exit codes (errors.py), health-check findings
(findings.py), text that cannot be stored (textcheck.py), bounded line reading (input_lines.py), masked
DSNs (dsn.py), background loads and the imports they need settled first (background.py, thread_imports.py),
and onnxruntime with its telemetry off (onnx_runtime.py).

May import (in openclaw_cli/): security.files (fsutil seals session documents in an encrypted home, lazily).
"""
