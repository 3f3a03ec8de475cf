"""Registry of measures: name -> which table it needs -> finalize.

Importing this package registers every measure; the public functions are
generated from the registry into :mod:`daskbicl.measures.functions`.
"""

from . import bicluster as _bicluster  # noqa: F401
from . import micro as _micro  # noqa: F401
from . import partition as _partition  # noqa: F401  (registers the measures)
from .api import finalize, make_measure_function, prepare, score, select_measures
from .registry import PROVIDERS, REGISTRY, Measure, Provider, get, register, register_provider

__all__ = [
    "PROVIDERS",
    "REGISTRY",
    "Measure",
    "Provider",
    "finalize",
    "get",
    "make_measure_function",
    "prepare",
    "register",
    "register_provider",
    "score",
    "select_measures",
]
