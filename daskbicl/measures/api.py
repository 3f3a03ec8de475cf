"""``score`` and the per-measure functions generated from the registry."""

from __future__ import annotations

import inspect
from collections.abc import Iterable

import dask

from ..errors import MeasureError
from ..io.inputs import opened
from .bootstrap import check_interval, check_method, compute_with_intervals, resampling_plan, with_intervals
from .plan import ScorePlan, run_tables
from .registry import Measure
from .request import check_options
from .tables import DENSE_CELLS as _DENSE_CELLS
from .tables import Contingency

__all__ = ["contingency", "function_stubs", "make_measure_function", "measure_docstring", "score", "write_function_stubs"]


def score(truth, pred=None, *, measures: str | Iterable[str] | None = None, progress: bool = False,
          compute: bool = True, unassigned: str = "error", storage_options: dict | None = None,
          ci: float | None = None, replicates: int = 999, seed: int = 0, ci_method: str = "bc", **params):
    """Score ``pred`` against ``truth`` with every requested measure.

    Parameters
    ----------
    truth, pred : xarray.Dataset, str, os.PathLike, tuple or fitted model
        Co-clusterings or biclusterings: a Dataset in the layout of
        :func:`daskbicl.partition` / :func:`daskbicl.biclustering`, the path
        or URL of a Zarr store, a tuple ``(row_labels, col_labels)`` of
        numpy or dask arrays, a tuple ``(row_mask, col_mask)`` of 2-D
        boolean arrays, or a fitted model (see
        :func:`daskbicl.from_estimator`).  Or ``truth`` alone: a
        :class:`~daskbicl.measures.tables.Contingency` from
        :func:`daskbicl.contingency`, scored without reading the data again.
    measures : str or list of str, optional
        Measure names (see ``daskbicl.MEASURES``); default: every measure
        that applies to the inputs (all co-clustering measures for two
        co-clusterings).
    progress : bool
        Show a progress bar on stderr while counting.
    compute : bool
        False: return a ``dask.delayed`` object that computes to the dict,
        to combine many scores (and other work) in one ``dask.compute``.
    unassigned : {"error", "cluster", "singleton"}
        What an unassigned label (NaN, None, pandas NA, or a negative
        integer such as DBSCAN's -1) of a co-clustering means: an error
        naming how many there are (default), one extra cluster of all the
        unassigned rows (likewise columns), or a cluster of its own each.
    storage_options : dict, optional
        fsspec options for ``truth`` and ``pred`` given as URLs (``s3://``,
        ``gs://``, ``https://``...): credentials, ``profile``,
        ``client_kwargs={"endpoint_url": ...}`` (docs: "Data on object
        stores").  Ignored for local paths and in-memory inputs.
    ci : float, optional
        A level such as 0.95: every measure finalized from the contingency
        tables (the co-clustering and per-axis measures) or from the
        bicluster overlap tables (the bicluster precision–recall family,
        consensus, Prelić, Liu–Wang) is returned as a
        :class:`~daskbicl.kernels.coclustering.resampling.Bootstrapped`
        float with its bias-corrected percentile interval (``low``,
        ``high``, ``method="bootstrap-bc"``; see ``ci_method``) over
        ``replicates`` two-way bootstrap
        replicates of the rows and columns, redrawn from the counted tables
        (no second read).  It covers the sampling of the items, not the
        algorithm's randomness (docs/guide/reading-a-score.md).
    replicates, seed : int
        Bootstrap replicates (default 999) and their seed (default 0: the
        same digits on any machine).
    ci_method : {"bc", "percentile"}
        The interval from the replicates: the bias-corrected percentile
        interval (``"bc"``, the default, labelled
        ``method="bootstrap-bc"``), which moves the interval of a biased
        plug-in statistic (NMI, CARI) back over the population value, or
        the plain percentile interval (``"percentile"``, labelled
        ``method="bootstrap"``), which covers less than its level for
        those measures (measured coverage: docs/guide/reading-a-score.md).
    **params
        Measure parameters (e.g. ``beta=0.5`` or ``R=2`` for bicluster
        measures, ``multiset=False`` for micro CE and RNIA), checked against
        each parameter's declared constraint before any data is read.
        Boolean parameters accept True/False, 1/0 and "true"/"false".

    Returns
    -------
    dict
        Measure name -> float (or a small named record).

    Notes
    -----
    Inputs are read once: every table the measures need is counted in one
    ``dask.compute``, on the active ``dask.distributed`` Client if there is
    one, otherwise on the local threaded scheduler.  Small in-memory inputs
    (at most the dask config key ``daskbicl.in_process_bytes``, 64 MiB, in
    all) are counted directly in this process instead, without a task graph,
    Client or not (docs/guide/cluster.md).  Steps whose work grows
    with the overlap of biclusters (the micro-object measures) stop with
    :class:`~daskbicl.errors.TooLargeError` above the dask config key
    ``daskbicl.max_work`` (work units of ~10 ns; default 6e9, about a
    minute): ``with dask.config.set({"daskbicl.max_work": 1e11}): ...``,
    or ``DASK_DASKBICL__MAX_WORK=1e11`` in the environment.

    Examples
    --------
    >>> import daskbicl
    >>> s = daskbicl.score(([0, 0, 1, 1], [0, 1, 1]), ([1, 1, 0, 0], [2, 3, 3]))
    >>> sorted(s)
    ['ari_cols', 'ari_rows', 'cari', 'ce', 'comi', 'conmi', 'enmi', 'nce']
    >>> s["cari"], s["nce"]
    (1.0, 1.0)
    >>> import dask
    >>> lazy = [daskbicl.score(([0, 1], [0]), ([1, k], [0]), measures="ari_rows", compute=False) for k in (0, 1)]
    >>> dask.compute(*lazy)
    ({'ari_rows': 1.0}, {'ari_rows': 0.0})
    """
    ci_method = check_method(ci_method)  # before any input is opened
    if ci is not None:
        level, replicates, seed = check_interval(ci, replicates, seed)
    if storage_options:
        truth, pred = opened(truth, "truth", storage_options), opened(pred, "pred", storage_options)
    plan = ScorePlan.build(truth, pred, measures, unassigned=unassigned, **params)
    if ci is None:
        return plan.compute(progress=progress) if compute else plan.to_delayed()
    interval = {"ci": level, "replicates": replicates, "seed": seed, "method": ci_method}
    plan = resampling_plan(plan)  # the membership patterns the bicluster measures' replicates redraw
    if not compute:
        # A closure, not arguments: delayed would unpack the plan (a dataclass) and load its input arrays.
        def finish(tables):
            return with_intervals(plan, tables, plan.finalize(tables), **interval)

        return dask.delayed(finish, pure=False)(plan.graphs())
    return compute_with_intervals(plan, progress=progress, **interval)


def measure_docstring(measure: Measure) -> str:
    """The numpydoc docstring of ``daskbicl.<name>``, from the measure's record."""
    symmetric = "symmetric" if measure.symmetric else "not symmetric"
    returns = f"NamedTuple ({', '.join(measure.fields)})" if measure.fields else "float"
    params = "".join(
        f"{name} : {type(p.default).__name__}, default {p.default!r}\n"
        f"    {p.doc} Must be {p.constraint.describe()}.\n"
        for name, p in measure.params.items()
    )
    return (
        f"{measure.summary}\n\n"
        "Parameters\n----------\n"
        "truth, pred : xarray.Dataset, str, os.PathLike, tuple or fitted model\n"
        "    Anything :func:`daskbicl.score` accepts (truth alone: a :func:`daskbicl.contingency`).\n"
        + params
        + "unassigned : str, default 'error'\n    What NaN/None/NA/negative labels mean: 'error', 'cluster' or "
        "'singleton' (see :func:`daskbicl.score`).\n"
        + "progress : bool\n    Show a progress bar while counting.\n"
        + "storage_options : dict, optional\n    fsspec options for stores given as URLs (see :func:`daskbicl.score`).\n\n"
        f"Returns\n-------\n{returns}\n    In [{measure.bounds[0]}, {measure.bounds[1]}]"
        f"{' each' if measure.fields else ''}; {symmetric}; perfect match = {measure.perfect}.\n\n"
        f"Notes\n-----\n{inspect.cleandoc(measure.doc)}\n"
    )


def make_measure_function(measure: Measure):
    """Build the public function ``daskbicl.<name>(truth, pred, **params)``."""

    def func(truth, pred=None, *, progress: bool = False, unassigned: str = "error",
             storage_options: dict | None = None, **params):
        return score(truth, pred, measures=[measure.name], progress=progress, unassigned=unassigned,
                     storage_options=storage_options, **params)[measure.name]

    parameters = [
        inspect.Parameter("truth", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter("pred", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None),
    ]
    parameters += [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=p.default)
        for name, p in measure.params.items()
    ]
    parameters.append(inspect.Parameter("unassigned", inspect.Parameter.KEYWORD_ONLY, default="error"))
    parameters.append(inspect.Parameter("progress", inspect.Parameter.KEYWORD_ONLY, default=False))
    parameters.append(inspect.Parameter("storage_options", inspect.Parameter.KEYWORD_ONLY, default=None))
    func.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    func.__name__ = func.__qualname__ = measure.name
    func.__doc__ = measure_docstring(measure)
    return func


#: Static type of a parameter's value, by its constraint (the canonical form; text is also read at run time).
_STUB_TYPES = {"Interval": "float", "Boolean": "bool", "OneOf": "str"}


def _record_type(measure: Measure) -> tuple[str, str]:
    """``(module, class)`` of the NamedTuple a record-valued measure returns (matched by its fields)."""
    from ..kernels.bicluster import precision_recall
    from ..kernels.micro import cell_records

    for module in (cell_records, precision_recall):
        for name, value in sorted(vars(module).items()):
            if isinstance(value, type) and issubclass(value, tuple) and getattr(value, "_fields", None) == measure.fields:
                return module.__name__, name
    raise MeasureError(f"{measure.name}: no record type with the fields {measure.fields}; add its module here")


def function_stubs(registry) -> str:
    """The text of ``daskbicl/measures/functions.pyi``: each generated function's signature, for type checkers and IDEs.

    Regenerate it after registering a measure with :func:`write_function_stubs`
    (``tests/test_architecture.py`` fails while the file and the registry differ).
    """
    imports = sorted({_record_type(m) for m in registry.values() if m.fields})
    lines = ['"""Signatures of the functions daskbicl.measures.functions generates from the registry.', "",
             "Generated by daskbicl.measures.api.write_function_stubs(): do not edit.", '"""', "",
             "from typing import Any", ""]
    lines += [f"from {module} import {name}" for module, name in imports] + ([""] if imports else [])
    lines += ["__all__ = ["] + [f"    {name!r}," for name in registry] + ["]", ""]
    for name, m in registry.items():
        params = "".join(f", {k}: {_STUB_TYPES[type(p.constraint).__name__]} = ..." for k, p in m.params.items())
        returns = _record_type(m)[1] if m.fields else "float"
        lines += ["", f"def {name}(truth: Any, pred: Any = ..., *{params}, unassigned: str = ..., "
                  f"progress: bool = ..., storage_options: dict | None = ...) -> {returns}:", f"    {m.summary!r}", "    ..."]
    return "\n".join(lines) + "\n"


def write_function_stubs() -> str:
    """Write ``functions.pyi`` beside ``functions.py`` from the registry; returns its path.

    ``python3 -c "from daskbicl.measures.api import write_function_stubs as w; print(w())"``
    """
    from pathlib import Path

    from .registry import REGISTRY

    path = Path(__file__).with_name("functions.pyi")
    path.write_text(function_stubs(REGISTRY), encoding="utf-8")
    return str(path)


def contingency(truth, pred, *, progress: bool = False, dense_cells: int = _DENSE_CELLS,
                unassigned: str = "error", storage_options: dict | None = None) -> Contingency:
    """Count the row and column contingency tables of two co-clusterings.

    Parameters
    ----------
    truth, pred
        Co-clusterings, in any form :func:`daskbicl.score` accepts.
    progress : bool
        Progress bar on stderr while counting.
    dense_cells : int
        Show tables up to this many cells dense (xarray), larger ones sparse
        (pandas Series of the non-zero cells).
    unassigned : {"error", "cluster", "singleton"}
        As for :func:`daskbicl.score`.  Unassigned entries appear in the
        tables under the label -1 (integer labels) or None ("cluster"), or
        -1, -2, ... one per entry ("singleton").
    storage_options : dict, optional
        fsspec options for stores given as URLs, as for :func:`daskbicl.score`.

    Returns
    -------
    Contingency
        Pass it to :func:`daskbicl.score` (``score(tables, measures=...)``)
        to score without reading the data again.

    Examples
    --------
    >>> import daskbicl
    >>> tables = daskbicl.contingency(([0, 0, 1, 1], [5, 5, 6]), ([1, 1, 0, 2], [0, 1, 1]))
    >>> tables.rows.values.tolist()
    [[0, 2, 0], [1, 0, 1]]
    >>> tables.cols.coords["truth"].values.tolist()
    [5, 6]
    >>> daskbicl.score(tables, measures=["ari_rows", "ce"]) == daskbicl.score(
    ...     ([0, 0, 1, 1], [5, 5, 6]), ([1, 1, 0, 2], [0, 1, 1]), measures=["ari_rows", "ce"])
    True
    """
    dense_cells = check_options(dense_cells=dense_cells)["dense_cells"]  # before anything is counted
    truth, pred = opened(truth, "truth", storage_options), opened(pred, "pred", storage_options)
    plan = ScorePlan.build(truth, pred, measures=[], tables=["partition"], unassigned=unassigned)
    rows, cols = plan.tables_of(run_tables([plan], progress=progress)[0], "partition")
    return Contingency(rows, cols, dense_cells)
