from lichessbot.cli import main

raise SystemExit(main())
