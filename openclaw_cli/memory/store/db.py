"""Opening a memory database, under the name upkeep/recovery.py still imports it by.

The SQLite backend lives in store/sqlite/ (connection, migrations, transactions and meta, the storage
itself); this module only keeps `open_db` reachable at its old address.
"""

from openclaw_cli.memory.store.sqlite.connection import open_db as open_db
