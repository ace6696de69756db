"""Encryption at rest (seed 000 §12): keys from a passphrase, a cipher for files, the key for databases.

A home is encrypted when `security/datakey.json` exists in it. A random 32-byte data key encrypts every
database (SQLite3 Multiple Ciphers, ChaCha20-Poly1305 pages, through apsw-sqlite3mc) and every JSON/JSONL
file (AES-256-GCM, one record per line); a key derived from the passphrase (scrypt) wraps the data key.

Imports: errors, fsutil and paths only. `cryptography` is imported inside the functions that need it, so
a plain home's commands never load it (tests/test_startup.py).

May import (in openclaw_cli/): core.
"""
