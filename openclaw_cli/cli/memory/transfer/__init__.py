"""`openclaw memory` commands that copy or move memories elsewhere: export, import and migrate
(portability.py), backup, restore and recover (backup.py), and migrate-backend between SQLite and
PostgreSQL (backend.py). Thin commands over memory/portability/ and memory/upkeep/.

May import (in cli/memory/): helpers.
"""
