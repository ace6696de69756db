from openclaw_cli.cli.main import run

run()
