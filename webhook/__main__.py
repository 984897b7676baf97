"""``python -m webhook``: the command line."""

from webhook.cli import main

raise SystemExit(main())
