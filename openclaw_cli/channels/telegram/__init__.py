"""Telegram through python-telegram-bot (v22, asyncio): channel.py (polling, sending), convert.py (Update to
Inbound, reply to HTML), files.py (inbound media). Imported only by the gateway's channel host.

May import (in channels/): base, chunking, journal, media, settings.
"""
