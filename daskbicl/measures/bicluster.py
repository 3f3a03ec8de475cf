"""Bicluster precision–recall measures (docs/measures/bicluster.md), declared in the registry.

All twelve aggregates are finalized from the ``bicluster`` provider: the
K x L tables of shared rows and shared columns and the bicluster sizes
(one chunked pass over the row masks and one over the column masks; for two
co-clusterings, derived from the contingency tables without any mask pass).
They share one *group* computation, the per-pair table
(:func:`daskbicl.kernels.bicluster.precision_recall.pair_measures`), run once per parameter set.
"""

from __future__ import annotations

import math

import numpy as np
import xarray as xr

from ..errors import InputError
from ..io.inputs import opened
from ..kernels.bicluster import matching, precision_recall
from ..kernels.bicluster.mask_counting import BiclusterTables, tables_from_partitions
from .plan import ScorePlan, run_tables
from .registry import (
    Boolean,
    Interval,
    Measure,
    OneOf,
    Param,
    Provider,
    register,
    register_provider,
)

__all__ = ["DROP_EMPTY_HINT", "pair_scores", "prepare_tables"]

register_provider(
    Provider(
        name="bicluster",
        kinds=("partition", "biclustering"),
        description="K x L shared-row and shared-column tables and bicluster sizes",
        tables="masks",
        finalize=BiclusterTables,
        ids=True,
        from_tables=tables_from_partitions,  # two co-clusterings: from their contingency tables, no mask pass
    )
)

R_PARAM = Param(1.0, Interval(0, math.inf, closed="neither"),
          "Goodness weight: R/(R+1) on precision, 1/(R+1) on recall (R > 1 favours precision).")
BETA = Param(1.0, Interval(0, math.inf, closed="neither"),
             "F-measure beta: the usual F_beta convention, beta > 1 favours recall.")
CLIP = Param(False, Boolean(),
             "Clip negative corrected and corrected-space values at 0 (no effect on the raw measures).")
DROP_EMPTY = Param(False, Boolean(),
                   "Ignore biclusters with no row or no column instead of failing on them.")
AGGREGATE = Param("truth", OneOf(precision_recall.AGGREGATES),
                  "Mean best match over 'truth' biclusters (Hanczar–Nadif, the default), over 'pred' "
                  "biclusters (spurious pred biclusters cost), or 'both' (their harmonic mean).")


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


def _pairs(tables: BiclusterTables, *, clip, drop_empty, R=R_PARAM.default, beta=BETA.default) -> tuple:
    """The pair table; R and beta default to their records' defaults for the measures that take neither."""
    tables = prepare_tables(tables, drop_empty)
    pairs = precision_recall.pair_measures_of(tables, R=R, beta=beta, clip=bool(clip))
    return tables, pairs


def _aggregates(tables: BiclusterTables, *, aggregate: str, **params) -> dict:
    _, pairs = _pairs(tables, **params)
    return precision_recall.best_match_mean(pairs, aggregate=aggregate)


def pair_scores(truth, pred, *, R: float = R_PARAM.default, beta: float = BETA.default,  # type: ignore[assignment]
                clip: bool = CLIP.default, drop_empty: bool = DROP_EMPTY.default,  # type: ignore[assignment]
                progress: bool = False, storage_options: dict | None = None) -> xr.Dataset:
    """Every bicluster precision–recall measure for every (truth, pred) bicluster pair.

    ``truth`` and ``pred``: anything :func:`daskbicl.score` accepts, stores given as URLs read with
    ``storage_options`` (fsspec options, as for :func:`daskbicl.score`).

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
    given = {"R": R, "beta": beta, "clip": clip, "drop_empty": drop_empty}
    R, beta, clip, drop_empty = (P.validate(k, given[k]) for k, P in  # before any input is opened
                                 (("R", R_PARAM), ("beta", BETA), ("clip", CLIP), ("drop_empty", DROP_EMPTY)))
    truth, pred = opened(truth, "truth", storage_options), opened(pred, "pred", storage_options)
    plan = ScorePlan.build(truth, pred, measures=[], tables=["bicluster"])
    tables = plan.tables_of(run_tables([plan], progress=progress)[0], "bicluster")
    tables, pairs = _pairs(tables, R=R, beta=beta, clip=clip, drop_empty=drop_empty)
    dims = ("truth_bicluster", "pred_bicluster")
    return xr.Dataset(
        {k: (dims, np.asarray(v)) for k, v in pairs.items()},
        coords={"truth_bicluster": tables.truth_ids, "pred_bicluster": tables.pred_ids},
        attrs={"R": R, "beta": beta, "clip": int(bool(clip)),
               "n_rows": int(tables.rows.length), "n_cols": int(tables.cols.length)},
    )



def _doc(formula: str, variant: str, name: str, note: str = "") -> str:
    """The shared docstring body of the twelve aggregates (formula, variant, aggregation)."""
    detail = {
        "raw": "",
        "corrected": (
            "corrected for size bias, :math:`M^c = (M - E[M])/(1 - E[M])` with the expectation\n"
            "for a random X of the same size (may be negative: worse than random),\n"
        ),
        "space": (
            "computed on the corrected precision and recall,\n"
            ":math:`pre^c = (|D|\\,pre - |B|)/(|D| - |B|)`, :math:`rec^c = (|D|\\,rec - |X|)/(|D| - |X|)`\n"
            "(F and Jaccard are 0 when :math:`pre^c \\le 0` or :math:`rec^c \\le 0`),\n"
        ),
    }[variant]
    return f"""
Hanczar & Nadif's index between a true bicluster B and an estimated X,
{detail}aggregated as the mean over true biclusters of the best match:

.. math::
    {formula}, \\quad
    I(\\mathrm{{truth}}, \\mathrm{{pred}}) = \\frac{{1}}{{K}}\\sum_k \\max_l M(B_k, X_l)

(``aggregate="pred"``: :math:`\\frac{{1}}{{L}}\\sum_l \\max_k M(B_k, X_l)`, so spurious pred
biclusters cost; ``aggregate="both"``: the harmonic mean of the two, or the smaller
when either is <= 0)

with :math:`pre = |B \\cap X|/|X|`, :math:`rec = |B \\cap X|/|B|`.  Finalized
from the K x L shared-row and shared-column tables (one pass over the masks).
{note}
Examples
--------
>>> import daskbicl
>>> truth = daskbicl.biclustering([[1, 1, 0, 0]], [[1, 1, 0]])
>>> round(daskbicl.{name}(truth, truth), 12)
1.0
"""


_GOODNESS = r"G_R = \frac{R\,pre + rec}{R + 1}"
_FMEASURE = r"F_\beta = \frac{(1+\beta^2)\,pre\,rec}{\beta^2 pre + rec}"
_DICE = r"D = \frac{2\,pre\,rec}{pre + rec}"
_JACCARD = r"J = \frac{pre\,rec}{pre + rec - pre\,rec}"
_JACCARD_NOTE = r"""
.. note::
    :math:`E[J]` is an *approximation* (the "≈" of its formula), the expected intersection
    :math:`|B||X|/|D|` over the expected union,

    .. math::
        E[J] \approx \frac{|B||X|}{|D||B| + |D||X| - |B||X|},

    not the exact expectation of the Jaccard index of a random X of size
    :math:`|X|` (the mean of a ratio is not the ratio of the means), so a
    random result's corrected Jaccard is only approximately 0.
"""
_RAW, _CORR, _SPACE = "mean best match", "size-bias corrected, (M − E[M])/(1 − E[M])", "in the corrected PR space"
_UNBOUNDED = (-math.inf, 1.0)


def _bicluster(name: str, summary: str, params: dict, bounds: tuple, doc: str) -> Measure:
    return Measure(
        name=name, summary=f"{summary}, over true biclusters.", family="bicluster", provider="bicluster",
        finalize=lambda agg: agg[name], shared=_aggregates, symmetric=False, bounds=bounds, perfect=1.0,
        params={**params, "clip": CLIP, "drop_empty": DROP_EMPTY, "aggregate": AGGREGATE}, doc=doc,
        empty_pred=0.0,
    )


register(_bicluster("goodness", f"Goodness(R) = (R·pre + rec)/(R+1), {_RAW}", {"R": R_PARAM}, (0.0, 1.0),
                    _doc(_GOODNESS, "raw", "goodness")))
register(_bicluster("goodness_corrected", f"Goodness(R), {_CORR}", {"R": R_PARAM}, _UNBOUNDED,
                    _doc(_GOODNESS, "corrected", "goodness_corrected")))
register(_bicluster("goodness_space", f"Goodness(R), {_SPACE}", {"R": R_PARAM}, _UNBOUNDED,
                    _doc(_GOODNESS, "space", "goodness_space")))
register(_bicluster("fmeasure", f"F-measure(β) = (1+β²)·pre·rec/(β²·pre + rec), {_RAW}", {"beta": BETA},
                    (0.0, 1.0), _doc(_FMEASURE, "raw", "fmeasure")))
register(_bicluster("fmeasure_corrected", f"F-measure(β), {_CORR}", {"beta": BETA}, _UNBOUNDED,
                    _doc(_FMEASURE, "corrected", "fmeasure_corrected")))
register(_bicluster("fmeasure_space", f"F-measure(β), {_SPACE}", {"beta": BETA}, _UNBOUNDED,
                    _doc(_FMEASURE, "space", "fmeasure_space")))
register(_bicluster("dice", f"Dice = F-measure with β = 1, {_RAW}", {}, (0.0, 1.0),
                    _doc(_DICE, "raw", "dice")))
register(_bicluster("dice_corrected", f"Dice, {_CORR}", {}, _UNBOUNDED,
                    _doc(_DICE, "corrected", "dice_corrected")))
register(_bicluster("dice_space", f"Dice, {_SPACE}", {}, _UNBOUNDED,
                    _doc(_DICE, "space", "dice_space")))
register(_bicluster("jaccard", f"Jaccard = pre·rec/(pre + rec − pre·rec), {_RAW}", {}, (0.0, 1.0),
                    _doc(_JACCARD, "raw", "jaccard")))
register(_bicluster("jaccard_corrected", f"Jaccard, {_CORR}", {}, _UNBOUNDED,
                    _doc(_JACCARD, "corrected", "jaccard_corrected", _JACCARD_NOTE)))
register(_bicluster("jaccard_space", f"Jaccard, {_SPACE}", {}, _UNBOUNDED,
                    _doc(_JACCARD, "space", "jaccard_space")))


def _matching(tables: BiclusterTables, finalize, drop_empty: bool) -> float:
    return finalize(prepare_tables(tables, drop_empty))


register(Measure(
    name="consensus",
    summary="scikit-learn's consensus score: cell Jaccard on a one-to-one matching, / max(K, L).",
    family="bicluster", provider="bicluster",
    finalize=lambda t, drop_empty: _matching(t, matching.consensus, drop_empty),
    symmetric=True, bounds=(0.0, 1.0), perfect=1.0, params={"drop_empty": DROP_EMPTY}, default=False,
    empty_pred=0.0,
    doc=r"""
.. math::
    \mathrm{consensus} = \frac{1}{\max(K, L)} \max_\sigma \sum_k J(B_k, X_{\sigma(k)}),\quad
    J(B, X) = \frac{|B \cap X|}{|B| + |X| - |B \cap X|}

Hochreiter et al. (2010), as scikit-learn's ``consensus_score``: the best
one-to-one matching of truth and pred biclusters by the Jaccard index of
their cell sets (:func:`scipy.optimize.linear_sum_assignment`), divided by the
larger number of biclusters, so both missed and spurious biclusters cost.
Symmetric.  Equal to scikit-learn on every input scikit-learn accepts,
except that scikit-learn returns NaN for an empty bicluster (0/0), where
daskbicl reports the empty bicluster (or drops it with ``drop_empty``).

Examples
--------
>>> import daskbicl
>>> truth = daskbicl.biclustering([[1, 1, 0, 0]], [[1, 1, 0]])
>>> pred = daskbicl.biclustering([[1, 1, 0, 0], [0, 0, 1, 1]], [[1, 1, 0], [0, 0, 1]])
>>> daskbicl.consensus(truth, pred)
0.5
""",
))

for _name, _direction, _over in (("prelic_relevance", "relevance", "pred"), ("prelic_recovery", "recovery", "truth")):
    register(Measure(
        name=_name,
        summary=f"Prelić {_direction}: sqrt of the mean best row- and column-set Jaccard over {_over} biclusters.",
        family="bicluster", provider="bicluster",
        finalize=lambda t, drop_empty, _d=_direction: _matching(t, lambda x: matching.prelic(x, _d), drop_empty),
        symmetric=False, bounds=(0.0, 1.0), perfect=1.0, params={"drop_empty": DROP_EMPTY}, default=False,
        empty_pred=0.0,
        doc=rf"""
.. math::
    S_{{rows}} = \frac{{1}}{{n}}\sum \max \frac{{|E \cap E'|}}{{|E \cup E'|}},\quad
    \mathrm{{{_direction}}} = \sqrt{{S_{{rows}}\,S_{{cols}}}}

Prelić et al. (2006), in the two-dimensional form of Horta & Campello
(2014) that biclustlib computes: the mean over {_over} biclusters of the best
Jaccard index of their row sets against the other side's, the same on
column sets (matched separately), and the geometric mean of the two.
Relevance averages over pred biclusters (are the found biclusters real?),
recovery over truth biclusters (is every true bicluster found?);
``prelic_relevance(truth, pred) == prelic_recovery(pred, truth)``.

Examples
--------
>>> import daskbicl
>>> truth = daskbicl.biclustering([[1, 1, 0, 0]], [[1, 1, 0]])
>>> pred = daskbicl.biclustering([[1, 1, 0, 0], [0, 0, 1, 1]], [[1, 1, 0], [0, 0, 1]])
>>> daskbicl.{_name}(truth, pred)
{1.0 if _direction == "recovery" else 0.5}
""",
    ))
