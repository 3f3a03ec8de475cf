"""daskbicl's dask config keys: defaults shipped in ``daskbicl.yaml``.

The defaults are registered with :func:`dask.config.update_defaults` when
this module is imported (as distributed does with ``distributed.yaml``), so
``dask.config.get("daskbicl.max_work")`` always has a value and users
override it the dask way: ``dask.config.set``, a YAML file in
``~/.config/dask/``, or ``DASK_DASKBICL__MAX_WORK=1e11`` in the environment.

Examples
--------
>>> from daskbicl import config
>>> config.get("chunk")
2097152
>>> import dask
>>> with dask.config.set({"daskbicl.chunk": 1024}):
...     config.get("chunk")
1024
"""

from __future__ import annotations

import os

import dask.config
import yaml

__all__ = ["DEFAULTS", "get", "KEYS", "storage_seconds"]

_PATH = os.path.join(os.path.dirname(__file__), "daskbicl.yaml")

with open(_PATH, encoding="utf-8") as _f:
    DEFAULTS: dict = yaml.safe_load(_f)

dask.config.update_defaults(DEFAULTS)

#: The keys daskbicl reads (without the ``daskbicl.`` prefix).
KEYS = tuple(DEFAULTS["daskbicl"])


def get(name: str):
    """The value of the config key ``daskbicl.<name>`` (the shipped default unless overridden)."""
    if name not in KEYS:
        raise KeyError(f"daskbicl has no config key {name!r}; known: {', '.join(KEYS)}")
    return dask.config.get(f"daskbicl.{name}")


def storage_seconds(name: str) -> float:
    """The storage key ``daskbicl.storage.<name>`` in seconds (``"30s"``, ``"2 minutes"`` or a number).

    Examples
    --------
    >>> import dask
    >>> with dask.config.set({"daskbicl.storage.read_timeout": "2 minutes"}):
    ...     storage_seconds("read_timeout")
    120.0
    """
    from dask.utils import parse_timedelta

    value = dask.config.get(f"daskbicl.storage.{name}")
    return float(parse_timedelta(value, default="seconds"))
