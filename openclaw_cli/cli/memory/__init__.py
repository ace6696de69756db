"""`openclaw memory`: commands.py is the group (add, list, show, forget and the rest it holds itself) and
registers the commands of its siblings, one module per verb or family: search.py (and search_sources.py
for `--source sessions`), edit.py, extract.py, inject.py, maintenance.py (status, index), purge.py,
reassign.py, workspace.py (note), and transfer/ (export, import, migrate, backup, restore,
migrate-backend). helpers.py is what they share: the chosen agent's memory service and its errors.

May import (in cli/): common, passphrase_edge, progress, job_lock.
"""
