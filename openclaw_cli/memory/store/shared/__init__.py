"""What the SQLite and PostgreSQL engines run alike: the statements written once in a dialect's tokens
(statements.py), and the base class both storages share that runs them and maps their rows to the
Protocol's types (storage.py). An engine adds only what its dialect does differently.

May import (in memory/store/): protocol_types, record_rows, records.
"""
