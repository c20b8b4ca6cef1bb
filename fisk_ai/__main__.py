from fisk_ai.cli.main import main

raise SystemExit(main())
