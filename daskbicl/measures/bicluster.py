"""Bicluster precision–recall measures (SPEC §4), declared in the registry.

All twelve aggregates are finalized from the ``bicluster`` provider: the
K x L tables of shared rows and shared columns and the bicluster sizes
(one chunked pass over the row masks and one over the column masks; for two
co-clusterings, derived from the contingency tables without any mask pass).
They share one *group* computation, the per-pair table
(:func:`daskbicl.kernels.bicluster.pair_measures`), run once per parameter set.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ..engine.bicluster import bicluster_tables
from ..errors import InputError
from ..kernels import bicluster as KB
from ..kernels.masks import BiclusterTables
from .registry import Measure, Provider, register, register_provider

__all__ = ["DROP_EMPTY_HINT", "pair_scores", "prepare_tables"]

register_provider(
    Provider(
        name="bicluster",
        build=lambda truth, pred: bicluster_tables(truth, pred),
        kinds=("partition", "biclustering"),
        description="K x L shared-row and shared-column tables and bicluster sizes",
    )
)

GROUP_PARAMS = {"R": 1.0, "beta": 1.0, "clip": False, "drop_empty": False}


#: How ``score`` and the ``daskbicl score`` command spell the drop_empty option.
DROP_EMPTY_HINT = "drop_empty=True (CLI: --param drop_empty=1)"


def prepare_tables(
    tables: BiclusterTables,
    drop_empty: bool = False,
    *,
    roles: tuple[str, str] = ("truth", "pred"),
    hint: str = DROP_EMPTY_HINT,
) -> BiclusterTables:
    """Reject (or, with ``drop_empty``, drop) biclusters with no row or no column.

    ``roles`` name the two sides in messages (e.g. ``("truth", "sweep 'a'")``)
    and ``hint`` is how the caller spells the option that drops them.
    """
    keep = []
    for side, sizes_r, sizes_c, ids in (
        (roles[0], tables.rows.truth_sizes, tables.cols.truth_sizes, tables.truth_ids),
        (roles[1], tables.rows.pred_sizes, tables.cols.pred_sizes, tables.pred_ids),
    ):
        empty = (np.asarray(sizes_r) == 0) | (np.asarray(sizes_c) == 0)
        if empty.any() and not drop_empty:
            names = ", ".join(repr(x) for x in np.asarray(ids)[empty][:5].tolist())
            raise InputError(
                f"{side} has {int(empty.sum())} empty bicluster(s) (no row or no column): {names}; "
                f"pass {hint} to ignore them"
            )
        keep.append(np.flatnonzero(~empty))
    if drop_empty:
        for side, kept in zip(roles, keep):
            if kept.size == 0:
                raise InputError(f"{side} has no non-empty bicluster left after drop_empty")
        tables = tables.drop(keep[0], keep[1])
    return tables


def _pairs(tables: BiclusterTables, *, R=1.0, beta=1.0, clip=False, drop_empty=False) -> tuple:
    tables = prepare_tables(tables, drop_empty)
    pairs = KB.pair_measures(
        tables.rows.shared,
        tables.cols.shared,
        tables.rows.truth_sizes,
        tables.cols.truth_sizes,
        tables.rows.pred_sizes,
        tables.cols.pred_sizes,
        tables.n_cells,
        R=R,
        beta=beta,
        clip=bool(clip),
    )
    return tables, pairs


def _aggregates(tables: BiclusterTables, **params) -> dict:
    _, pairs = _pairs(tables, **params)
    return KB.best_match_mean(pairs)


def pair_scores(truth, pred, *, R: float = 1.0, beta: float = 1.0, clip: bool = False,
                drop_empty: bool = False, progress: bool = False) -> xr.Dataset:
    """Every SPEC §4 measure for every (truth, pred) bicluster pair.

    Returns
    -------
    xarray.Dataset
        Dims ``(truth_bicluster, pred_bicluster)`` with the bicluster
        coordinates carried over; variables ``intersection``, ``precision``,
        ``recall`` and ``goodness``, ``fmeasure``, ``dice``, ``jaccard``, each
        raw, ``_corrected`` and ``_space``.  Attributes hold ``R``, ``beta``
        and the matrix shape.

    Examples
    --------
    >>> import numpy as np, daskbicl
    >>> truth = daskbicl.biclustering([[1, 1, 0, 0]], [[1, 1, 0]], bicluster=["B"])
    >>> pred = daskbicl.biclustering([[1, 1, 0, 0], [0, 0, 1, 1]], [[1, 0, 0], [0, 1, 1]])
    >>> ds = daskbicl.pair_scores(truth, pred)
    >>> ds.precision.sel(truth_bicluster="B").values.tolist()
    [1.0, 0.0]
    >>> float(ds.recall.sel(truth_bicluster="B", pred_bicluster=0))
    0.5
    """
    from ..engine.core import compute
    from ..io.align import align
    from ..io.validate import as_dataset

    truth, pred = align(as_dataset(truth, "truth"), as_dataset(pred, "pred"))
    (tables,) = compute(bicluster_tables(truth, pred), progress=progress)
    tables, pairs = _pairs(tables, R=R, beta=beta, clip=clip, drop_empty=drop_empty)
    dims = ("truth_bicluster", "pred_bicluster")
    return xr.Dataset(
        {k: (dims, np.asarray(v)) for k, v in pairs.items()},
        coords={"truth_bicluster": tables.truth_ids, "pred_bicluster": tables.pred_ids},
        attrs={"R": R, "beta": beta, "clip": int(bool(clip)),
               "n_rows": int(tables.rows.length), "n_cols": int(tables.cols.length)},
    )


_BASE = {
    "goodness": ("Goodness(R) = (R·pre + rec)/(R+1)", ("R",),
                 "G_R = \\frac{R\\,pre + rec}{R + 1}"),
    "fmeasure": ("F-measure(β) = (1+β²)·pre·rec/(β²·pre + rec)", ("beta",),
                 "F_\\beta = \\frac{(1+\\beta^2)\\,pre\\,rec}{\\beta^2 pre + rec}"),
    "dice": ("Dice = F-measure with β = 1", (),
             "D = \\frac{2\\,pre\\,rec}{pre + rec}"),
    "jaccard": ("Jaccard = pre·rec/(pre + rec − pre·rec)", (),
                "J = \\frac{pre\\,rec}{pre + rec - pre\\,rec}"),
}
_VARIANTS = {
    "": ("mean best match", (0.0, 1.0), "raw"),
    "_corrected": ("size-bias corrected, (M − E[M])/(1 − E[M])", (-np.inf, 1.0),
                   "corrected for size bias: :math:`M^c = (M - E[M])/(1 - E[M])` (may be negative: worse than random)"),
    "_space": ("in the corrected precision–recall space", (-np.inf, 1.0),
               "the uncorrected formula on corrected precision and recall "
               "(SPEC §4: 0 when pre^c ≤ 0 or rec^c ≤ 0 for F and Jaccard)"),
}

_NOTES = {
    "jaccard_corrected": """
.. note::
    :math:`E[J]` is SPEC §4's *approximation* (the "≈" row of its table),

    .. math::
        E[J] \\approx \\frac{|B||X|}{|D||B| + |D||X| - |B||X|},

    the expected intersection :math:`|B||X|/|D|` divided by the expected
    union, not the exact expectation of the Jaccard index of a random X of
    size :math:`|X|` (the mean of a ratio is not the ratio of the means).
    So a random result's corrected Jaccard is only approximately 0.
""",
}

for _base, (_formula, _own, _math) in _BASE.items():
    for _suffix, (_what, _bounds, _detail) in _VARIANTS.items():
        _name = _base + _suffix
        _params = {p: GROUP_PARAMS[p] for p in _own}
        # every bicluster measure accepts clip and drop_empty, so one parameter
        # set works for any selection; clip only changes corrected values
        _params["clip"] = False
        _params["drop_empty"] = False
        _note = _NOTES.get(_name, "")
        register(
            Measure(
                name=_name,
                summary=f"{_formula}, {_what}, over true biclusters.",
                family="bicluster",
                needs="bicluster",
                finalize=(lambda agg, key=_name: agg[key]),
                group=_aggregates,
                group_params=GROUP_PARAMS,
                symmetric=False,
                bounds=_bounds,
                perfect=1.0,
                params=_params,
                doc=f"""
Hanczar & Nadif's {_base} between a true bicluster B and an estimated X,
{_detail}, aggregated as the mean over true biclusters of the best match:

.. math::
    {_math}, \\quad
    I(\\mathrm{{truth}}, \\mathrm{{pred}}) = \\frac{{1}}{{K}}\\sum_k \\max_l M(B_k, X_l)

with :math:`pre = |B \\cap X|/|X|`, :math:`rec = |B \\cap X|/|B|`.  Exact
definitions and errata: SPEC §4.  Finalized from the K x L shared-row and
shared-column tables; ``clip`` clips negative corrected and corrected-space
values at 0 (accepted, with no effect, by the raw measures),
``drop_empty`` ignores biclusters with no row or no column (otherwise they
are an error naming the bicluster).
{_note}
Examples
--------
>>> import daskbicl
>>> truth = daskbicl.biclustering([[1, 1, 0, 0]], [[1, 1, 0]])
>>> round(daskbicl.{_name}(truth, truth), 12)
1.0
""",
            )
        )
