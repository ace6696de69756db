"""`openclaw channels list|status` (commands.py: the chat-app channels as configured and as the running
gateway sees them) and `openclaw pairing list|approve|deny` (pairing.py: who may talk to the assistant
through a channel). Thin commands over channels/ and gateway/.

May import (in cli/): common.
"""
