"""`openclaw gateway` (run, start, stop, status, call: commands.py) and `openclaw cron` (cron.py: the
gateway's own schedule, its jobs and their last and next runs). Thin commands over gateway/ and scheduler/.

May import (in cli/): common, passphrase_edge.
"""
