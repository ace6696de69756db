"""Commands about the home itself rather than what it holds: `openclaw doctor` (doctor.py), `openclaw
config` (config_cmd.py), `openclaw auth` (auth.py: an agent's API keys per provider) and `openclaw
security` (security.py: encryption at rest, init, status, rekey, decrypt).

May import (in cli/): common, passphrase_edge.
"""
