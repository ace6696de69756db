"""Slack: Events API pushed to the gateway's port, replies with slack-sdk's WebClient. Imported only by the
gateway's channel host.

May import (in channels/): base, chunking, settings.
"""
