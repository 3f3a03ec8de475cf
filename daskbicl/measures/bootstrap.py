"""Bootstrap intervals over the items: ``score(..., ci=0.95)``.

Every measure finalized from the contingency tables (provider
``partition``: the co-clustering and per-axis measures) gets a percentile
interval from ``replicates`` two-way bootstrap replicates: the row table
and the column table are each redrawn from a multinomial with their own
cell shares, independently (rows and columns resampled with replacement;
:mod:`daskbicl.kernels.coclustering.resampling`), and the measure's own
finalize reads each replicate as it reads the observed tables.

Every measure finalized from the bicluster overlap tables (provider
``bicluster``: the precision–recall family raw, corrected and in the
corrected space, consensus, Prelić, Liu–Wang) gets one the same way: the
rows' and the columns' membership patterns (which truth and pred
biclusters hold each item; the ``patterns`` tables below, counted in the
same pass as the overlaps) are redrawn from their multinomials and give
the replicate's overlap tables exactly
(:mod:`daskbicl.kernels.bicluster.pattern_resampling`).

The counting pass runs once, as for ``score``: the replicates cost no read.
Seeded: the same inputs, level, replicates and seed give the same digits on
any machine or cluster.  Measures from other passes (micro, covers,
recovery) are returned as they are.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .. import config
from ..errors import DaskbiclError, MeasureError
from ..kernels.bicluster import pattern_resampling as bicluster_resampling
from ..kernels.bicluster import precision_recall
from ..kernels.coclustering import cocluster_scores, resampling
from ..kernels.coclustering.cocluster_scores import Matched
from ..kernels.coclustering.matching_replicates import MatchedReplicates, ReplicateMatching
from ..kernels.coclustering.resampling import (
    Bootstrapped,
    Redraw,
    bias_corrected_interval,
    percentile_interval,
    replicate_table,
)
from .registry import Interval, Measure, OneOf, Param, Provider, register_provider

__all__ = ["CI", "LABELS", "MATCHED", "METHOD", "REPLICATES", "SEED", "VECTORISED", "all_replicate_values", "bicluster_replicate",
           "bicluster_replicate_values", "bootstrappable", "check_interval", "check_level", "check_method", "compute_with_intervals",
           "interval", "replicate_values", "resampling_plan", "with_intervals"]

CI = Param(0.95, Interval(0.0, 1.0, closed="neither"), "Level of the bootstrap interval over the items.")
REPLICATES = Param(999, Interval(1, 10**7, closed="both"), "Number of bootstrap replicates.")
SEED = Param(0, Interval(0, 2**63 - 1, closed="both"), "Seed of the bootstrap replicates.")
METHOD = Param("bc", OneOf(("bc", "percentile")),
               "Interval from the replicates: 'bc', the bias-corrected percentile interval (the default: "
               "within 3 points of nominal coverage for CARI, ARI, NMI, NCE and the corrected F-measure), "
               "or 'percentile' (short of nominal for the biased plug-in NMI and CARI).")

#: How each interval method labels its values (``Bootstrapped.method``).
LABELS = {"percentile": "bootstrap", "bc": "bootstrap-bc"}

#: Replicates redrawn at once (the same for every input, so the digits do not depend on the machine).
_BATCH = 64

#: The provider whose tables a replicate redraws.
_PROVIDER = "partition"

#: The provider of the bicluster overlap tables, and that of the membership patterns its replicates redraw.
_BICLUSTER, _PATTERNS = "bicluster", "patterns"


def _patterns(rows, cols) -> tuple:
    return bicluster_resampling.axis_patterns(rows), bicluster_resampling.axis_patterns(cols)


#: Pair scores of a batch held at once (replicates x K x L): temporaries that stay in a core's cache
#: (about 2x faster than 2**19 at 200 x 200 biclusters; the digits do not depend on it).
_PAIR_CELLS = 1 << 16


register_provider(
    Provider(
        name=_PATTERNS,
        kinds=("partition", "biclustering"),
        tables="memberships",
        finalize=_patterns,
        from_tables=bicluster_resampling.table_patterns,  # two co-clusterings: a pattern is a contingency cell
        description="row and column membership patterns and the items with each (the memberships pass), "
        "redrawn by the bootstrap intervals of the bicluster measures (score(..., ci=))",
    )
)


def _enmi(r: resampling.AxisReplicates, c: resampling.AxisReplicates) -> np.ndarray:
    out = np.zeros_like(r.cell_sq)
    for s in (r, c):
        out = out + resampling.ratio_replicates(resampling.mi_replicates(s), np.maximum(*resampling.entropy_replicates(s)))
    return out


def _conmi(r: resampling.AxisReplicates, c: resampling.AxisReplicates) -> np.ndarray:
    (hz, hzp), (hw, hwp) = resampling.entropy_replicates(r), resampling.entropy_replicates(c)
    comi = resampling.mi_replicates(r) + resampling.mi_replicates(c)
    return resampling.ratio_replicates(comi, np.maximum(hz + hw, hzp + hwp))


#: Measures computed for a batch of replicates at once, from their sums (the same formulas as their
#: finalize, in float64; ``tests/measures/test_bootstrap.py`` checks each against its finalize on every replicate).
#: The other bootstrappable measures run their own finalize on each replicate's tables.
VECTORISED = {
    "cari": resampling.cari_replicates,
    "ari_rows": lambda r, c: resampling.ari_replicates(r),
    "ari_cols": lambda r, c: resampling.ari_replicates(c),
    "comi": lambda r, c: resampling.mi_replicates(r) + resampling.mi_replicates(c),
    "conmi": _conmi,
    "enmi": _enmi,
}


#: Measures computed from each replicate's matched counts (:class:`~daskbicl.kernels.coclustering.cocluster_scores.Matched`
#: of the row and the column table), with the very functions their finalize calls; the counts of a batch of
#: replicates are certified at once where they can be, each other replicate's table solved
#: (:mod:`~daskbicl.kernels.coclustering.matching_replicates`).  Exact: ``tests/measures/test_bootstrap.py`` checks each
#: against its finalize on every replicate.
MATCHED = {
    "ce": cocluster_scores.ce_of,
    "nce": cocluster_scores.nce_of,
    "accuracy": cocluster_scores.cell_accuracy_of,
    "accuracy_rows": lambda r, c: cocluster_scores.accuracy_of(r),
    "accuracy_cols": lambda r, c: cocluster_scores.accuracy_of(c),
}


def _matched_values(values: dict, plan, chosen: tuple, counts: tuple[MatchedReplicates, MatchedReplicates],
                    start: int) -> None:
    """The measures ``chosen`` (of :data:`MATCHED`) on each replicate of a batch, from its matched counts."""
    params = {m.name: m.finalize_params(plan.params[m.name]) for m in chosen}
    rows, cols = counts
    for i in range(rows.matched.size):
        r, c = (Matched(int(a.matched[i]), a.n, int(max(a.truth_clusters[i], a.pred_clusters[i]))) for a in counts)
        for m in chosen:
            values[m.name][start + i] = MATCHED[m.name](r, c, **params[m.name])


def bootstrappable(measure: Measure) -> bool:
    """Whether ``measure`` gets an interval: it is finalized from the contingency or the bicluster overlap tables."""
    return measure.provider in (_PROVIDER, _BICLUSTER)


def resampling_plan(plan):
    """``plan``, with the membership patterns counted too when a bicluster measure is to get an interval."""
    if plan.empty_pred or not any(m.provider == _BICLUSTER for m in plan.measures) or _PATTERNS in plan.options:
        return plan
    return dataclasses.replace(plan, options={**plan.options, _PATTERNS: {}})


def _integer(name: str, value, param: Param) -> int:
    checked = param.validate(name, value)
    if float(checked) != int(checked):
        raise MeasureError(f"parameter {name} must be a whole number, got {value!r}")
    return int(checked)


def check_level(ci) -> float:
    """A bootstrap interval's level (a manifest's ``ci``) checked: a number strictly between 0 and 1."""
    if isinstance(ci, bool):
        raise MeasureError(f"parameter ci must be a number, got {ci!r}")
    return float(CI.validate("ci", ci))


def check_interval(ci, replicates, seed) -> tuple[float, int, int]:
    """``(level, replicates, seed)`` checked and converted, before any input is read."""
    return float(CI.validate("ci", ci)), _integer("replicates", replicates, REPLICATES), _integer("seed", seed, SEED)


def check_method(method) -> str:
    """The interval method checked (``"bc"``, the default, or ``"percentile"``), before any input is read."""
    return str(METHOD.validate("ci_method", method))


def _replicate_values(plan, tables, provider: str = _PROVIDER) -> dict[str, float]:
    """Each measure of ``plan`` on one replicate's tables; NaN where it is undefined there."""
    key = plan.keys[provider]
    try:
        return {k: float(v) for k, v in plan.finalize({key: tables}).items()}
    except (DaskbiclError, ZeroDivisionError, ValueError, FloatingPointError):
        out = {}
        for m in plan.measures:
            one = dataclasses.replace(plan, measures=(m,))
            try:
                out[m.name] = float(one.finalize({key: tables})[m.name])
            except (DaskbiclError, ZeroDivisionError, ValueError, FloatingPointError):
                out[m.name] = math.nan
        return out


def replicate_values(plan, rows, cols, *, replicates: int, seed: int, vectorised: bool = True) -> dict:
    """Measure name -> its value on each of ``replicates`` replicates of the tables ``rows`` and ``cols``.

    ``vectorised=False`` runs every measure's own finalize on every replicate (the reference the
    vectorised formulas are tested against).
    """
    chosen = tuple(m for m in plan.measures if m.provider == _PROVIDER)
    fast = tuple(m for m in chosen if vectorised and m.name in VECTORISED)
    matched = tuple(m for m in chosen if vectorised and m.name in MATCHED)
    slow = tuple(m for m in chosen if m not in fast and m not in matched)
    sub = dataclasses.replace(plan, measures=slow, options={_PROVIDER: plan.options.get(_PROVIDER, {})})
    values = {m.name: np.full(replicates, np.nan) for m in chosen}
    row_seed, col_seed = np.random.SeedSequence(seed).spawn(2)
    row_rng, col_rng = np.random.default_rng(row_seed), np.random.default_rng(col_seed)
    row_redraw, col_redraw = Redraw(rows.counts), Redraw(cols.counts)
    if matched:
        dense_limit = int(config.get("dense_limit"))
        matchings = ReplicateMatching(rows, dense_limit), ReplicateMatching(cols, dense_limit)
    for start in range(0, replicates, _BATCH):
        k = min(_BATCH, replicates - start)
        drawn_rows = row_redraw.draw(k, row_rng)
        drawn_cols = col_redraw.draw(k, col_rng)
        if fast:
            sums = resampling.axis_replicates(rows, drawn_rows), resampling.axis_replicates(cols, drawn_cols)
            for m in fast:
                values[m.name][start : start + k] = VECTORISED[m.name](*sums)
        if matched:
            counts = matchings[0].matched(drawn_rows), matchings[1].matched(drawn_cols)
            _matched_values(values, plan, matched, counts, start)
        for i in range(k) if slow else ():
            one = (replicate_table(rows, drawn_rows[i]), replicate_table(cols, drawn_cols[i]))
            for name, value in _replicate_values(sub, one).items():
                values[name][start + i] = value
    return values


def _fast_groups(plan, chosen: tuple) -> dict:
    """(R, beta, clip, aggregate) -> the precision–recall aggregates computed together for a batch."""
    groups: dict = {}
    for m in chosen:
        if m.name in precision_recall.MEASURE_KEYS:
            p = {"R": 1.0, "beta": 1.0, "clip": False, "aggregate": "truth", **m.finalize_params(plan.params[m.name])}
            groups.setdefault((float(p["R"]), float(p["beta"]), bool(p["clip"]), p["aggregate"]), []).append(m.name)
    return groups


def _fast_batch(values: dict, groups: dict, patterns, incidence, drawn, n_cells: int, start: int) -> None:
    k, l = patterns[0].truth.shape[1], patterns[0].pred.shape[1]
    step = max(1, _PAIR_CELLS // max(1, k * l))
    for lo in range(0, drawn[0].shape[0], step):
        hi = min(lo + step, drawn[0].shape[0])
        over = [bicluster_resampling.overlap_replicates(p, d[lo:hi], inc) for p, d, inc in zip(patterns, drawn, incidence)]
        for (R, beta, clip, aggregate), names in groups.items():
            got = bicluster_resampling.aggregate_replicates(*over, n_cells, names, R=R, beta=beta, clip=clip,
                                                            aggregate=aggregate)
            for name in names:
                values[name][start + lo : start + hi] = got[name]


def _blocks(plan) -> tuple[bool, bool]:
    """Which sides are co-clusterings (their blocks emptied by a draw do not exist in the resampled data)."""
    if plan.truth is None:  # scored from contingency tables
        return True, True
    return tuple(ds.attrs["daskbicl_kind"] == "partition" for ds in (plan.truth, plan.pred))  # type: ignore[return-value]


def _dropping(plan, measures: tuple):
    """``plan`` finalizing ``measures`` with ``drop_empty`` on where they take it (a replicate's emptied biclusters)."""
    params = {m.name: {**plan.params[m.name], **({"drop_empty": True} if "drop_empty" in m.params else {})}
              for m in measures}
    return dataclasses.replace(plan, measures=measures, params={**plan.params, **params})


def bicluster_replicate(plan, rows, cols, drawn_rows, drawn_cols, ids) -> dict[str, float]:
    """Each bicluster measure of ``plan`` on the replicate whose pattern counts are ``drawn_rows``, ``drawn_cols``
    (``rows``, ``cols``: the ``patterns`` tables; ``ids``: the observed tables' bicluster ids), finalized as
    :func:`bicluster_replicate_values` does; NaN where a measure is undefined on the replicate."""
    sub = _dropping(plan, tuple(m for m in plan.measures if m.provider == _BICLUSTER))
    one = bicluster_resampling.replicate_tables(rows, cols, drawn_rows, drawn_cols, ids, _blocks(plan))
    return _replicate_values(sub, one, _BICLUSTER)


def bicluster_replicate_values(plan, rows, cols, ids, *, replicates: int, seed: int, vectorised: bool = True) -> dict:
    """Bicluster measure name -> its value on each of ``replicates`` replicates of the patterns ``rows``, ``cols``.

    The precision–recall aggregates are computed for a batch of replicates at once
    (:func:`~daskbicl.kernels.bicluster.pattern_resampling.aggregate_replicates`); the other bicluster
    measures, and all with ``vectorised=False`` (the reference), run their own finalize on each
    replicate's tables.
    """
    chosen = tuple(m for m in plan.measures if m.provider == _BICLUSTER)
    values = {m.name: np.full(replicates, np.nan) for m in chosen}
    groups = _fast_groups(plan, chosen) if vectorised else {}
    fast = {name for names in groups.values() for name in names}
    sub = _dropping(plan, tuple(m for m in chosen if m.name not in fast))
    row_seed, col_seed = np.random.SeedSequence(seed).spawn(4)[2:]  # the first two: the contingency tables'
    rngs = np.random.default_rng(row_seed), np.random.default_rng(col_seed)
    patterns = (rows, cols)
    incidence = [bicluster_resampling.pair_incidence(p) for p in patterns] if groups else None
    n_cells = int(rows.n) * int(cols.n)
    redraws = [Redraw(p.counts) for p in patterns]
    for start in range(0, replicates, _BATCH):
        k = min(_BATCH, replicates - start)
        drawn = [redraw.draw(k, rng) for redraw, rng in zip(redraws, rngs)]
        if groups:
            _fast_batch(values, groups, patterns, incidence, drawn, n_cells, start)
        for i in range(k) if sub.measures else ():
            one = bicluster_resampling.replicate_tables(rows, cols, drawn[0][i], drawn[1][i], ids, _blocks(plan))
            for name, value in _replicate_values(sub, one, _BICLUSTER).items():
                values[name][start + i] = value
    return values


def all_replicate_values(plan, tables: dict, *, replicates: int, seed: int) -> dict:
    """Bootstrappable measure name -> its value on each replicate, from the computed tables of ``plan``
    (graph key -> table; a plan of :func:`resampling_plan` when it has bicluster measures)."""
    chosen = tuple(m for m in plan.measures if bootstrappable(m))
    values: dict = {}
    if any(m.provider == _PROVIDER for m in chosen):
        rows, cols = plan.tables_of(tables, _PROVIDER)
        values.update(replicate_values(plan, rows, cols, replicates=replicates, seed=seed))
    if any(m.provider == _BICLUSTER for m in chosen):
        observed = plan.tables_of(tables, _BICLUSTER)
        rows, cols = plan.tables_of(tables, _PATTERNS)
        values.update(bicluster_replicate_values(plan, rows, cols, (observed.truth_ids, observed.pred_ids),
                                                 replicates=replicates, seed=seed))
    return values


def interval(values: np.ndarray, observed: float, level: float, method: str = "bc") -> Bootstrapped:
    """The :class:`~daskbicl.kernels.coclustering.resampling.Bootstrapped` value of ``observed`` from its replicates.

    ``method``: ``"percentile"`` (labelled ``"bootstrap"``) or ``"bc"``, the bias-corrected percentile
    interval (labelled ``"bootstrap-bc"``; :func:`~daskbicl.kernels.coclustering.resampling.bias_corrected_interval`).
    """
    if method == "bc":
        low, high, undefined = bias_corrected_interval(values, float(observed), level)
    else:
        low, high, undefined = percentile_interval(values, level)
    return Bootstrapped(observed, low, high, len(values), level=level, undefined=undefined, method=LABELS[method])


def with_intervals(plan, tables: dict, results: dict, *, ci: float, replicates: int, seed: int,
                   method: str = "bc") -> dict:
    """``results`` with a :class:`~daskbicl.kernels.coclustering.resampling.Bootstrapped` value for every
    bootstrappable measure, from the computed tables of ``plan`` (graph key -> table; a plan of
    :func:`resampling_plan` when it has bicluster measures); ``method`` as in :func:`interval`."""
    values = all_replicate_values(plan, tables, replicates=replicates, seed=seed)
    out = dict(results)
    for name, replicated in values.items():
        out[name] = interval(replicated, results[name], ci, method)
    return out


def compute_with_intervals(plan, *, ci: float, replicates: int, seed: int, method: str = "bc",
                           progress: bool = False) -> dict:
    """Count ``plan``'s tables once, finalize its measures and add their intervals (:func:`with_intervals`)."""
    from .plan import run_tables

    plan = resampling_plan(plan)
    tables = run_tables([plan], progress=progress)[0]
    return with_intervals(plan, tables, plan.finalize(tables), ci=ci, replicates=replicates, seed=seed,
                          method=method)
