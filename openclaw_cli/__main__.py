from openclaw_cli.entry import main

main()
