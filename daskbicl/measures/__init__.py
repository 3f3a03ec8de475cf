"""Registry of measures: name -> provider (counting pass) -> finalize.

Importing this package registers every measure; the public functions are
generated from the registry into :mod:`daskbicl.measures.functions`, and
:class:`~daskbicl.measures.plan.ScorePlan` is the one pipeline every caller
scores through.
"""

import importlib
import pkgutil

from .api import contingency, make_measure_function, measure_docstring, score
from .bootstrap import check_level
from .plan import ScorePlan, provider_options, run, run_tables
from .registry import (
    PROVIDERS,
    REGISTRY,
    Boolean,
    Interval,
    Measure,
    OneOf,
    Param,
    Provider,
    catalogue,
    get,
    register,
    register_provider,
)
from .request import check_options, check_params, check_request, resolve_params, select_measures
from .tables import Contingency

#: Modules of this package that are machinery, not measure records.
_MACHINERY = frozenset({"api", "functions", "null", "plan", "registry", "request", "tables", "weighted_indices"})

# Every other module holds records and registers them when imported: all are imported here, in name
# order, so a measure in a new file registers without any other edit and in the same order every time.
for _info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name):
    if _info.name not in _MACHINERY:
        importlib.import_module(f"{__name__}.{_info.name}")

__all__ = [
    "PROVIDERS",
    "REGISTRY",
    "Boolean",
    "Contingency",
    "Interval",
    "Measure",
    "OneOf",
    "Param",
    "Provider",
    "catalogue",
    "ScorePlan",
    "check_level",
    "check_options",
    "check_params",
    "check_request",
    "contingency",
    "get",
    "make_measure_function",
    "measure_docstring",
    "provider_options",
    "register",
    "register_provider",
    "resolve_params",
    "run",
    "run_tables",
    "score",
    "select_measures",
]
