"""The settings: pydantic models, one per section of the config file (models.py); loading `openclaw.json`
(JSON5) or `openclaw.toml` overlaid with `OPENCLAW_*` variables from an environment mapping the caller
passes, and reading or setting one key (loading.py); editing a JSON5 document in place with its comments
kept (edit.py); the TOML file, read with tomllib and edited with tomlkit (toml_file.py).

The sections of channels and the scheduler are declared beside their code (channels/settings.py,
scheduler/settings.py), and person ids are checked by identity/person_ids.py: models.py imports those
three modules, which import nothing above config.

May import (in openclaw_cli/): core, channels.settings, scheduler.settings, identity.person_ids.
"""
