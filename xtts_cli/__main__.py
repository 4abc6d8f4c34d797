from xtts_cli.cli.app import main

main()
