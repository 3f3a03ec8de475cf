"""``python -m daskbicl`` is the ``daskbicl`` command."""

from .cli import script

script()
