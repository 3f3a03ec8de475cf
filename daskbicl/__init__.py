"""daskbicl: score co-clusterings and biclusterings against a reference, at any scale.

Quick start
-----------
>>> import daskbicl
>>> truth = daskbicl.partition([0, 0, 1, 1], [0, 1, 1])
>>> pred = daskbicl.partition([3, 3, 9, 9], [5, 2, 2])
>>> daskbicl.score(truth, pred, measures=["cari", "nce"])
{'cari': 1.0, 'nce': 1.0}

Every measure is also a function (``daskbicl.cari(truth, pred)``) and an
accessor method (``truth.bicl.cari(pred)``); ``daskbicl.MEASURES`` lists them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

import xarray as xr

from . import accessor as _accessor  # noqa: F401  (registers Dataset.bicl)
from ._version import __version__
from .errors import (
    AlignmentError,
    DaskbiclError,
    InfrastructureError,
    InputError,
    LabelError,
    MeasureError,
    NoWorkersError,
    SchedulerError,
    StoreError,
    StoreReadError,
    StoreWriteError,
    TooLargeError,
    WorkerKilledError,
)
from .io import save
from .io.align import check_unique
from .io.inputs import as_input as as_dataset
from .io.inputs import (
    biclustering_dataset,
    biclustering_from_indices,
    coordinate_labels,
    from_estimator,
)
from .io.store import open_store as open
from .io.validate import as_dataset as _validated
from .kernels.micro.estimates import Estimate
from .measures import REGISTRY as _REGISTRY
from .measures import Contingency, contingency, score
from .measures.bicluster import pair_scores
from .measures.explain import explain
from .measures.functions import *  # noqa: F403  (one function per measure)
from .measures.functions import __all__ as _measure_names

if TYPE_CHECKING:  # loaded on first use at run time (see _LAZY); named here for type checkers and linters
    from .io.synthetic import perturb, random_partition
    from .kernels.tradeoff.indices import R_from_lambda, beta_from_lambda, lambda_from_beta, lambda_from_R
    from .measures.field_cells import element_scores
    from .measures.null import NullResult, null
    from .measures.weighted_indices import weighted_index
    from .tradeoffs.space import (
        application_domain,
        compare_algorithms,
        optimal_tradeoff,
        tradeoff_curves,
    )
    from .tradeoffs.sweep import SweepTradeoff, tradeoff

#: Registered measures: name -> :class:`daskbicl.measures.Measure`.
MEASURES = dict(_REGISTRY)

#: Public names that scoring does not need, loaded on first use (``import daskbicl``
#: skips them): name -> the module that defines it.
_LAZY = {
    **dict.fromkeys(["NullResult", "null"], ".measures.null"),
    **dict.fromkeys(["SweepTradeoff", "tradeoff"], ".tradeoffs.sweep"),
    **dict.fromkeys(["application_domain", "compare_algorithms", "optimal_tradeoff", "tradeoff_curves"],
                    ".tradeoffs.space"),
    **dict.fromkeys(["R_from_lambda", "beta_from_lambda", "lambda_from_beta", "lambda_from_R"],
                    ".kernels.tradeoff.indices"),
    "weighted_index": ".measures.weighted_indices",
    **dict.fromkeys(["perturb", "random_partition"], ".io.synthetic"),
    "element_scores": ".measures.field_cells",
}


def __getattr__(name: str):
    """Load a name of :data:`_LAZY` on first use (PEP 562), then keep it in the module."""
    if name not in _LAZY:
        raise AttributeError(f"module 'daskbicl' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


def partition(row_labels, col_labels, *, row=None, col=None):
    """A co-clustering Dataset (docs/guide/data-model.md) from row and column labels.

    Parameters
    ----------
    row_labels, col_labels : array-like of hashable labels
        numpy or dask arrays, lists, pandas Series or Categoricals (dask
        arrays stay lazy).  Labels may be integers of any width, strings,
        bytes, integral floats or any hashable object; NaN, None, pandas NA
        and negative integers are *unassigned* entries (see the
        ``unassigned`` option of :func:`daskbicl.score`).
    row, col : array-like, optional
        Coordinate labels (gene ids, sample ids, ...): when both truth and
        pred carry them, rows and columns are matched by label.

    Returns
    -------
    xarray.Dataset

    Examples
    --------
    >>> ds = partition([0, 0, 1], [2, 2], row=["g1", "g2", "g3"], col=["s1", "s2"])
    >>> ds.attrs["daskbicl_kind"], ds.sizes["row"], ds.sizes["col"]
    ('partition', 3, 2)
    >>> partition(["tumour", "normal", "tumour"], [-1, 0]).col_labels.values.tolist()
    [-1, 0]
    """
    ds = _validated((row_labels, col_labels), "partition")
    coords = {}
    for dim, values in (("row", row), ("col", col)):
        if values is not None:
            coords[dim] = coordinate_labels(values, dim, ds.sizes[dim], "partition()")
    if coords:
        ds = ds.assign_coords(coords)
        for dim in coords:  # reject duplicated coordinate labels now, not at scoring time
            check_unique(ds.indexes[dim], "partition()", dim)
    return xr.Dataset(ds.data_vars, coords=ds.coords, attrs=ds.attrs)


def biclustering(row_mask, col_mask, *, bicluster=None, row=None, col=None):
    """A biclustering Dataset (docs/guide/data-model.md) from boolean masks.

    Parameters
    ----------
    row_mask : array-like of bool, shape (K, I)
        ``row_mask[k, i]`` is True when row i is in bicluster k (0/1 works too).
    col_mask : array-like of bool, shape (K, J)
    bicluster, row, col : array-like, optional
        Coordinate labels (bicluster names, gene ids, sample ids).

    See Also
    --------
    biclustering_from_indices : from lists of row and column indices.
    from_estimator : from a fitted scikit-learn style model.

    Examples
    --------
    >>> ds = biclustering([[1, 1, 0]], [[0, 1]], bicluster=["B1"])
    >>> ds.attrs["daskbicl_kind"], dict(ds.sizes)
    ('biclustering', {'bicluster': 1, 'row': 3, 'col': 2})
    """
    ds = biclustering_dataset(row_mask, col_mask, bicluster=bicluster, row=row, col=col, role="biclustering()")
    return _validated(ds, "biclustering()", allow_empty=True)


__all__ = [
    "MEASURES",
    "Estimate",
    "Contingency",
    "contingency",
    "explain",
    "null",
    "NullResult",
    "SweepTradeoff",
    "application_domain",
    "R_from_lambda",
    "beta_from_lambda",
    "compare_algorithms",
    "lambda_from_R",
    "lambda_from_beta",
    "optimal_tradeoff",
    "tradeoff",
    "tradeoff_curves",
    "weighted_index",
    "biclustering",
    "biclustering_from_indices",
    "from_estimator",
    "pair_scores",
    "element_scores",
    "AlignmentError",
    "DaskbiclError",
    "InfrastructureError",
    "InputError",
    "LabelError",
    "MeasureError",
    "NoWorkersError",
    "SchedulerError",
    "StoreError",
    "StoreReadError",
    "StoreWriteError",
    "TooLargeError",
    "WorkerKilledError",
    "__version__",
    "as_dataset",
    "open",
    "partition",
    "perturb",
    "random_partition",
    "save",
    "score",
    *_measure_names,
]
