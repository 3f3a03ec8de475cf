"""``python -m daskbicl`` is the ``daskbicl`` command."""

import sys

from .cli import main

sys.exit(main())
