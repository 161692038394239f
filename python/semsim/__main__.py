"""``python -m semsim``: the same as the ``semsim`` command."""

import sys

from .cli import main

sys.exit(main())
