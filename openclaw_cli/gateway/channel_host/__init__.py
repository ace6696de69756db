"""The gateway's side of the channels (channels/base.py): host.py starts and stops them and is their
`Sink` (an inbound message becomes a turn in its lane, the reply goes back to its chat), recovery.py
finds what a message left in its session when the gateway died before the reply was recorded, util.py
holds the small pieces (policies from settings, reply texts, bounded bodies).

May import (in gateway/): core, lanes, routing.
"""
