"""Registry of measures: name -> provider (counting pass) -> finalize.

Importing this package registers every measure; the public functions are
generated from the registry into :mod:`daskbicl.measures.functions`, and
:class:`~daskbicl.measures.plan.ScorePlan` is the one pipeline every caller
scores through.
"""

from . import bicluster as _bicluster  # noqa: F401  (registers the measures)
from . import coclustering as _partition  # noqa: F401
from . import information as _information  # noqa: F401
from . import micro as _micro  # noqa: F401
from . import pairs as _pairs  # noqa: F401
from .api import contingency, make_measure_function, measure_docstring, score
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
    get,
    register,
    register_provider,
)
from .request import check_options, check_params, check_request, resolve_params, select_measures
from .tables import Contingency

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
    "ScorePlan",
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
