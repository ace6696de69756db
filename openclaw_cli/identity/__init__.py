"""Who is who: every inbound message resolves to a person (persons.py: the owner, identityLinks, private
sessions), person ids and links as plain text rules (person_ids.py, which config validation uses), what a
caller may claim about who speaks at each entry point (claims.py), one agent's effective settings over the
global ones (agent_config.py) and its API keys per provider (auth_profiles.py, 0600).

May import (in openclaw_cli/): core, config, sessions.keys (a session key names the peer a person is).
"""
