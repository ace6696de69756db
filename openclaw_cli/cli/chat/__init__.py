"""`openclaw chat`: the command (commands.py), one message and exit (once.py), and the terminal side
(ui.py: prompt_toolkit reads lines, rich renders). The turn runs through agent/clients/, in a running
gateway or in this process.

May import (in cli/): common.
"""
