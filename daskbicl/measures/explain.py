"""``daskbicl.explain``: what a score is made of, from the tables the scoring pass counts.

A score says how close two (bi)clusterings are; the explanation says which
clusters were found, split, merged or missed.  Everything here is read off
the tables the one counting pass of :func:`daskbicl.score` produces — the
row and column contingency tables of two co-clusterings, or the K x L
shared-row and shared-column tables of two biclusterings — in the same
``dask.compute`` as the scores: no second read of the data
(docs/guide/reading-a-score.md).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable

import dask
import numpy as np
import xarray as xr

from ..errors import InputError
from ..io.inputs import opened
from ..io.validate import PARTITION
from ..kernels.bicluster.mask_counting import BiclusterTables
from ..kernels.coclustering.cocluster_scores import matching
from ..kernels.coclustering.contingency import Table
from .bicluster import DROP_EMPTY, prepare_tables
from .coclustering import _dense_limit
from .plan import ScorePlan, run_tables
from .registry import Interval, Param
from .request import check_options
from .tables import Contingency

__all__ = ["AXES", "SHARE", "THRESHOLD", "explain", "explain_bicluster_tables", "explain_tables", "score_values"]

#: The two axes of a co-clustering, as explain's variables and dimensions spell them.
AXES = ("row", "col")

SHARE = Param(0.1, Interval(0.0, 1.0, closed="neither"),
              "A pred cluster *takes* a truth cluster when it holds more than this share of the truth "
              "cluster's items: a truth cluster taken by two or more pred clusters is split, a pred "
              "cluster that takes two or more truth clusters merges them.")
THRESHOLD = Param(0.5, Interval(0.0, 1.0, closed="right"),
                  "A truth bicluster is recovered when its best pred match has a cell Jaccard index of at "
                  "least this; a pred bicluster whose best truth match is below it is spurious.")


def explain(truth, pred=None, *, measures: str | Iterable[str] | None = None, share: float = SHARE.default,
            threshold: float = THRESHOLD.default, unassigned: str = "error", progress: bool = False,
            compute: bool = True, storage_options: dict | None = None, **params):
    """Explain a score: matched, split, merged, missed and spurious clusters, with the scores.

    Parameters
    ----------
    truth, pred
        Anything :func:`daskbicl.score` accepts (``truth`` alone: a
        :func:`daskbicl.contingency`, explained without reading the data).
    measures : str or list of str, optional
        The scores to report beside the explanation (default: every measure
        :func:`daskbicl.score` computes for the inputs).
    share : float, default 0.1
        Co-clusterings: a pred cluster *takes* a truth cluster when it holds
        more than this share of it (``n_hh' > share · n_h``).
    threshold : float, default 0.5
        Biclusterings: the cell Jaccard index at or above which a truth
        bicluster counts as recovered by its best pred match.
    unassigned, progress
        As for :func:`daskbicl.score`.
    compute : bool
        False: a ``dask.delayed`` object that computes to the Dataset (the
        counting pass and the explanation in one graph, on any scheduler).
    storage_options : dict, optional
        fsspec options for stores given as URLs, as for :func:`daskbicl.score`.
    **params
        Measure parameters, as for :func:`daskbicl.score`.

    Returns
    -------
    xarray.Dataset
        ``score`` (dim ``measure``): the scores.  Two co-clusterings, per axis
        ``a`` in ``row``, ``col`` (dims ``a_truth`` and ``a_pred``, labelled
        with the clusterings' own labels): ``a_count`` (the contingency
        table), ``a_truth_size``, ``a_pred_size``, ``a_match`` (the pred
        cluster each truth cluster is matched to by the one-to-one matching
        CE and NCE use; ``a_matched`` False where none is), ``a_shared``,
        ``a_recall`` (shared / truth size), ``a_precision`` (shared / size of
        the match), ``a_misplaced`` (items of the truth cluster off the
        matching, as a share of all items: they sum to 1 − accuracy, the
        axis's CE distance), ``a_takes`` (``n_hh' > share · n_h``; never for the
        unassigned items' label),
        ``a_split_into`` (how many pred clusters take the truth cluster),
        ``a_merges`` (how many truth clusters each pred cluster takes),
        ``a_pred_match``, and the scalars ``a_items``,
        ``a_unassigned_truth`` and ``a_unassigned_pred`` (items in the
        unassigned label, whatever the policy).  Biclusterings (dims
        ``truth_bicluster``, ``pred_bicluster``): ``shared_cells``,
        ``jaccard``, ``precision``, ``recall``, the bicluster sizes in cells,
        each side's best match and its Jaccard, ``recovered`` (truth),
        ``spurious`` (pred).

    Examples
    --------
    >>> import daskbicl
    >>> truth = daskbicl.partition([0, 0, 0, 0, 1, 1, 2, 2], [0, 0, 1, 1])
    >>> pred = daskbicl.partition([5, 5, 6, 6, 7, 7, 7, 7], [0, 0, 1, 1])   # splits 0, merges 1 and 2
    >>> ds = daskbicl.explain(truth, pred, measures=["cari", "accuracy_rows"])
    >>> ds.row_count.values.tolist()
    [[2, 2, 0], [0, 0, 2], [0, 0, 2]]
    >>> ds.row_split_into.values.tolist(), ds.row_merges.values.tolist()
    ([2, 1, 1], [1, 1, 2])
    >>> ds.row_match.values.tolist(), ds.row_matched.values.tolist()
    ([5, 7, None], [True, True, False])
    >>> float(ds.row_misplaced.sum()), 1 - float(ds.score.sel(measure="accuracy_rows"))
    (0.5, 0.5)
    """
    share = SHARE.validate("share", share)
    threshold = THRESHOLD.validate("threshold", threshold)
    truth, pred = opened(truth, "truth", storage_options), opened(pred, "pred", storage_options)
    plan, provider = _plan(truth, pred, measures, unassigned, params)
    options = {"share": share, "threshold": threshold, "drop_empty": _drop_empty(params),
               "unassigned": check_options(unassigned=unassigned)["unassigned"]}
    if not compute:
        # A closure, not arguments: delayed would unpack the plan (a dataclass) and load its input arrays.
        def assemble(tables):
            return _assemble(plan, provider, tables, options)

        return dask.delayed(assemble, pure=False)(plan.graphs())
    return _assemble(plan, provider, run_tables([plan], progress=progress)[0], options)


def _drop_empty(params: dict) -> bool:
    return bool(DROP_EMPTY.validate("drop_empty", params.get("drop_empty", DROP_EMPTY.default)))


def _plan(truth, pred, measures, unassigned, params) -> tuple[ScorePlan, str]:
    """The score plan, with the tables explain reads added to its one pass; and their provider's name."""
    if isinstance(truth, Contingency):
        plan = ScorePlan.build(truth, pred, measures, **params)
        provider = "partition"
    else:
        plan = ScorePlan.build(truth, pred, measures, unassigned=unassigned, **params)
        if plan.empty_pred:
            raise InputError("pred has no biclusters: there is nothing to match (every truth bicluster is missed)")
        kinds = (plan.truth.attrs["daskbicl_kind"], plan.pred.attrs["daskbicl_kind"])
        provider = "partition" if kinds == (PARTITION, PARTITION) else "bicluster"
    options = dict(plan.options)
    options.setdefault(provider, {})
    return dataclasses.replace(plan, options=options), provider


def _assemble(plan: ScorePlan, provider: str, tables: dict, options: dict) -> xr.Dataset:
    """The explanation Dataset from the computed tables (graph key -> value)."""
    scores = score_values(plan.finalize(tables))
    table = plan.tables_of(tables, provider)
    if provider == "partition":
        ds = explain_tables(*table, share=options["share"], unassigned=options["unassigned"])
    else:
        ds = explain_bicluster_tables(table, threshold=options["threshold"], drop_empty=options["drop_empty"])
    ds["score"] = xr.DataArray(np.array(list(scores.values()), dtype=np.float64), dims=("measure",),
                               coords={"measure": list(scores)})
    return ds


def score_values(results: dict) -> dict[str, float]:
    """A score dict flattened to floats: a record-valued measure gives ``name.field`` entries.

    >>> from collections import namedtuple
    >>> score_values({"a": 0.5, "b": namedtuple("PRF", "precision recall")(1.0, 0.25)})
    {'a': 0.5, 'b.precision': 1.0, 'b.recall': 0.25}
    """
    out = {}
    for name, value in results.items():
        if hasattr(value, "_asdict"):
            out.update({f"{name}.{field}": float(v) for field, v in value._asdict().items()})
        else:
            out[name] = float(value)
    return out


# --------------------------------------------------------------------------- co-clusterings


def _unassigned(labels: np.ndarray) -> np.ndarray:
    """Which labels hold unassigned entries: None, or a negative integer (the engine's markers)."""
    if labels.dtype == object:
        return np.array([v is None or (isinstance(v, (int, np.integer)) and v < 0) for v in labels.tolist()], bool)
    if labels.dtype.kind == "i":
        return labels < 0
    return np.zeros(labels.shape, dtype=bool)


def _labels_of(labels: np.ndarray, index: np.ndarray, present: np.ndarray) -> np.ndarray:
    """``labels[index]`` where ``present``, None elsewhere (object dtype then)."""
    if present.all():
        return labels[index]
    out = np.full(present.shape, None, dtype=object)
    out[present] = labels[index[present]]
    return out


def _axis(table: Table, axis: str, share: float, dense_limit: int) -> dict:
    """The explanation variables of one axis's contingency table."""
    t, p = f"{axis}_truth", f"{axis}_pred"
    h, hp = table.shape
    dense = table.dense()
    sizes, pred_sizes = table.truth_sizes(), table.pred_sizes()
    r, c, n = matching(table, dense_limit)
    match = np.full(h, -1, dtype=np.intp)
    match[r] = c
    pred_match = np.full(hp, -1, dtype=np.intp)
    pred_match[c] = r
    matched = match >= 0
    shared = np.zeros(h, dtype=np.int64)
    shared[r] = n
    precision = np.full(h, math.nan)
    precision[r] = n / pred_sizes[c]
    takes = dense * 1.0 > share * sizes[:, None].astype(np.float64)  # n_hh' > share·n_h
    truth_out, pred_out = _unassigned(table.truth_labels), _unassigned(table.pred_labels)
    takes[truth_out, :] = False  # the unassigned items are no cluster that could be split or merged
    takes[:, pred_out] = False
    total = table.n
    v = {
        f"{axis}_count": ((t, p), dense),
        f"{axis}_truth_size": ((t,), sizes),
        f"{axis}_pred_size": ((p,), pred_sizes),
        f"{axis}_match": ((t,), _labels_of(table.pred_labels, match, matched)),
        f"{axis}_matched": ((t,), matched),
        f"{axis}_shared": ((t,), shared),
        f"{axis}_recall": ((t,), shared / sizes),
        f"{axis}_precision": ((t,), precision),
        f"{axis}_misplaced": ((t,), (sizes - shared) / total),
        f"{axis}_takes": ((t, p), takes),
        f"{axis}_split_into": ((t,), takes.sum(axis=1)),
        f"{axis}_merges": ((p,), takes.sum(axis=0)),
        f"{axis}_pred_match": ((p,), _labels_of(table.truth_labels, pred_match, pred_match >= 0)),
        f"{axis}_items": ((), total),
        f"{axis}_unassigned_truth": ((), int(sizes[truth_out].sum())),
        f"{axis}_unassigned_pred": ((), int(pred_sizes[pred_out].sum())),
    }
    return {"vars": v, "coords": {t: table.truth_labels, p: table.pred_labels}}


def explain_tables(row_table: Table, col_table: Table, *, share: float = SHARE.default,
                   unassigned: str = "error") -> xr.Dataset:
    """The co-clustering explanation (without scores) from the two contingency tables.

    >>> from daskbicl.kernels.coclustering.contingency import Table
    >>> ds = explain_tables(Table.from_labels([0, 0, 1], [3, 4, 4]), Table.from_labels([0], [0]))
    >>> ds.row_recall.values.tolist(), ds.row_merges.values.tolist()
    ([0.5, 1.0], [1, 2])
    """
    share = SHARE.validate("share", share)
    data, coords = {}, {}
    for axis, table in zip(AXES, (row_table, col_table)):
        part = _axis(table, axis, share, _dense_limit())
        data.update({k: xr.Variable(dims, np.asarray(v)) for k, (dims, v) in part["vars"].items()})
        coords.update(part["coords"])
    return xr.Dataset(data, coords=coords, attrs={"kind": PARTITION, "share": share, "unassigned": unassigned})


# --------------------------------------------------------------------------- biclusterings


def _best(matrix: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """Index and value of the largest entry along ``axis`` (the first on ties)."""
    idx = np.argmax(matrix, axis=axis)
    return idx, np.take_along_axis(matrix, np.expand_dims(idx, axis), axis).squeeze(axis)


def explain_bicluster_tables(tables: BiclusterTables, *, threshold: float = THRESHOLD.default,
                             drop_empty: bool = False) -> xr.Dataset:
    """The biclustering explanation (without scores) from the K x L shared-row and shared-column tables.

    >>> from daskbicl.kernels.bicluster.mask_counting import BiclusterTables, MaskCounts
    >>> import numpy as np
    >>> rows = MaskCounts(np.array([[2, 0]]), np.array([2]), np.array([2, 1]), 4)
    >>> cols = MaskCounts(np.array([[2, 1]]), np.array([2]), np.array([2, 2]), 4)
    >>> ds = explain_bicluster_tables(BiclusterTables(rows, cols, np.array(["B"]), np.array([0, 1])))
    >>> ds.jaccard.values.tolist(), ds.recovered.values.tolist(), ds.spurious.values.tolist()
    ([[1.0, 0.0]], [True], [False, True])
    """
    threshold = THRESHOLD.validate("threshold", threshold)
    from ..kernels.bicluster.precision_recall import pair_measures_of

    tables = prepare_tables(tables, drop_empty)
    pairs = pair_measures_of(tables)
    jac = np.asarray(pairs["jaccard"], dtype=np.float64)
    t_ids, p_ids = np.asarray(tables.truth_ids), np.asarray(tables.pred_ids)
    t_best, t_val = _best(jac, 1)
    p_best, p_val = _best(jac, 0)
    dims = ("truth_bicluster", "pred_bicluster")
    t_cells = tables.rows.truth_sizes.astype(np.int64) * tables.cols.truth_sizes.astype(np.int64)
    p_cells = tables.rows.pred_sizes.astype(np.int64) * tables.cols.pred_sizes.astype(np.int64)
    ds = xr.Dataset(
        {
            "shared_cells": (dims, np.asarray(pairs["intersection"])),
            "shared_rows": (dims, np.asarray(tables.rows.shared, dtype=np.int64)),
            "shared_cols": (dims, np.asarray(tables.cols.shared, dtype=np.int64)),
            "jaccard": (dims, jac),
            "precision": (dims, np.asarray(pairs["precision"], dtype=np.float64)),
            "recall": (dims, np.asarray(pairs["recall"], dtype=np.float64)),
            "truth_cells": (dims[:1], t_cells),
            "pred_cells": (dims[1:], p_cells),
            "truth_best": (dims[:1], p_ids[t_best]),
            "truth_best_jaccard": (dims[:1], t_val),
            "recovered": (dims[:1], t_val >= threshold),
            "pred_best": (dims[1:], t_ids[p_best]),
            "pred_best_jaccard": (dims[1:], p_val),
            "spurious": (dims[1:], p_val < threshold),
        },
        coords={"truth_bicluster": t_ids, "pred_bicluster": p_ids},
        attrs={"kind": "biclustering", "threshold": threshold, "n_rows": int(tables.rows.length),
               "n_cols": int(tables.cols.length)},
    )
    return ds
