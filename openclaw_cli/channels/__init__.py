"""Channels: chat apps (Telegram, Slack) as entry points of the gateway (seed 003 §2, DESIGN "Channels").

A channel turns platform events into one normalised `Inbound` (base.py), hands it to a `Sink` (the gateway's
host, gateway/channel_host/host.py) and sends the reply back to the chat it came from. What every platform shares
lives here: the interface (base.py), settings (settings.py), text chunking (chunking.py), access control and
pairing (access.py), the per-account journal and update offset (journal.py). One subpackage per platform:
telegram/ (python-telegram-bot), slack/ (slack-sdk); those libraries are imported only there, so the CLI's
start-up never loads them.

Never imports gateway/: the gateway imports this package, and a plugin's channel will implement the same
interface without the gateway's internals.

May import (in openclaw_cli/): core, security, config.
"""
