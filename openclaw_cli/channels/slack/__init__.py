"""Slack: Events API pushed to the gateway's port, replies with slack-sdk's WebClient. Imported only by the
gateway's channel host."""
