"""Whether the numba-compiled micro-object kernels are already cached (without importing numba).

The family kernels (``kernels/family*.py``) are compiled with
``cache=True``: the first use after an install compiles them (20 s on a
quiet 2-core machine, up to a minute under load) and writes numba's cache
beside the modules (``__pycache__``), or under ``NUMBA_CACHE_DIR``, or in
the user's cache folder when the package folder is read-only; every later
process loads them in about a second.  The command line uses
:func:`cached` to say so before a first, silent compile.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cached"]

# Which measures run the compiled walk is a fact of their records (``Measure.compiled``).


def _cache_folders() -> list[Path]:
    folders = [Path(__file__).parent / "micro" / "__pycache__"]
    if os.environ.get("NUMBA_CACHE_DIR"):
        folders.append(Path(os.environ["NUMBA_CACHE_DIR"]))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folders.append(Path(base) / "numba")
    return folders


def cached() -> bool:
    """True when numba's index of the family walk is found in one of the places numba caches to."""
    for folder in _cache_folders():
        if folder.is_dir() and next(folder.rglob("family_walk.*.nbi"), None) is not None:
            return True
    return False
