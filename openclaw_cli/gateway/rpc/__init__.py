"""What both front doors speak: the WebSocket frames (protocol.py) and the methods, each taking a params
object and returning a payload (methods.py; cron_methods.py for the schedule, memory_reads.py for the
CLI's memory reads, session_search.py for `session.search`, purge.py for `memory.purge` in the process
that owns the journal and the session writers).

May import (in gateway/): core, lanes.
"""
