"""`openclaw doctor`: the health checks over one home and agent (checks.py), each problem a Finding with
a fix hint. It is a use case over every other package (permissions, config, sessions, memory, channels,
plugins), so it sits above them, below cli/ and gateway/ (whose admin page shows the same report).

May import (in openclaw_cli/): core, config, identity, sessions, memory, channels, plugins.
"""
