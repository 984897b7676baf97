"""``python -m webhook``: the command line."""

import sys

from webhook.cli import main

sys.exit(main())
