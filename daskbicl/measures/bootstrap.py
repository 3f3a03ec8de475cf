"""Bootstrap intervals over the items: ``score(..., ci=0.95)``.

Every measure finalized from the contingency tables (provider
``partition``: the co-clustering and per-axis measures) gets a percentile
interval from ``replicates`` two-way bootstrap replicates: the row table
and the column table are each redrawn from a multinomial with their own
cell shares, independently (rows and columns resampled with replacement;
:mod:`daskbicl.kernels.coclustering.resampling`), and the measure's own
finalize reads each replicate as it reads the observed tables.  The
counting pass runs once, as for ``score``: the replicates cost no read.
Seeded: the same inputs, level, replicates and seed give the same digits on
any machine or cluster.  Measures from other passes (bicluster, micro) are
returned as they are.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..errors import DaskbiclError, MeasureError
from ..kernels.coclustering import resampling
from ..kernels.coclustering.resampling import (
    Bootstrapped,
    percentile_interval,
    redraw_counts,
    replicate_table,
)
from .registry import Interval, Measure, Param

__all__ = ["CI", "REPLICATES", "SEED", "VECTORISED", "bootstrappable", "check_interval", "compute_with_intervals",
           "replicate_values", "with_intervals"]

CI = Param(0.95, Interval(0.0, 1.0, closed="neither"), "Level of the bootstrap interval over the items.")
REPLICATES = Param(999, Interval(1, 10**7, closed="both"), "Number of bootstrap replicates.")
SEED = Param(0, Interval(0, 2**63 - 1, closed="both"), "Seed of the bootstrap replicates.")

#: Replicates redrawn at once (the same for every input, so the digits do not depend on the machine).
_BATCH = 64

#: The provider whose tables a replicate redraws.
_PROVIDER = "partition"


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
#: finalize, in float64; ``tests/test_bootstrap.py`` checks each against its finalize on every replicate).
#: The other bootstrappable measures run their own finalize on each replicate's tables.
VECTORISED = {
    "cari": resampling.cari_replicates,
    "ari_rows": lambda r, c: resampling.ari_replicates(r),
    "ari_cols": lambda r, c: resampling.ari_replicates(c),
    "comi": lambda r, c: resampling.mi_replicates(r) + resampling.mi_replicates(c),
    "conmi": _conmi,
    "enmi": _enmi,
}


def bootstrappable(measure: Measure) -> bool:
    """Whether ``measure`` gets an interval: it is finalized from the two contingency tables."""
    return measure.provider == _PROVIDER


def _integer(name: str, value, param: Param) -> int:
    checked = param.validate(name, value)
    if float(checked) != int(checked):
        raise MeasureError(f"parameter {name} must be a whole number, got {value!r}")
    return int(checked)


def check_interval(ci, replicates, seed) -> tuple[float, int, int]:
    """``(level, replicates, seed)`` checked and converted, before any input is read."""
    return float(CI.validate("ci", ci)), _integer("replicates", replicates, REPLICATES), _integer("seed", seed, SEED)


def _replicate_values(plan, tables: tuple) -> dict[str, float]:
    """Each measure of ``plan`` on one replicate's tables; NaN where it is undefined there."""
    key = plan.keys[_PROVIDER]
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
    chosen = tuple(m for m in plan.measures if bootstrappable(m))
    fast = tuple(m for m in chosen if vectorised and m.name in VECTORISED)
    slow = tuple(m for m in chosen if m not in fast)
    sub = dataclasses.replace(plan, measures=slow, options={_PROVIDER: plan.options.get(_PROVIDER, {})})
    values = {m.name: np.full(replicates, np.nan) for m in chosen}
    row_seed, col_seed = np.random.SeedSequence(seed).spawn(2)
    row_rng, col_rng = np.random.default_rng(row_seed), np.random.default_rng(col_seed)
    for start in range(0, replicates, _BATCH):
        k = min(_BATCH, replicates - start)
        drawn_rows = redraw_counts(rows.counts, k, row_rng)
        drawn_cols = redraw_counts(cols.counts, k, col_rng)
        if fast:
            sums = resampling.axis_replicates(rows, drawn_rows), resampling.axis_replicates(cols, drawn_cols)
            for m in fast:
                values[m.name][start : start + k] = VECTORISED[m.name](*sums)
        for i in range(k) if slow else ():
            one = (replicate_table(rows, drawn_rows[i]), replicate_table(cols, drawn_cols[i]))
            for name, value in _replicate_values(sub, one).items():
                values[name][start + i] = value
    return values


def with_intervals(plan, tables: dict, results: dict, *, ci: float, replicates: int, seed: int) -> dict:
    """``results`` with a :class:`~daskbicl.kernels.coclustering.resampling.Bootstrapped` value for every
    bootstrappable measure, from the computed tables of ``plan`` (graph key -> table)."""
    chosen = tuple(m for m in plan.measures if bootstrappable(m))
    if not chosen:
        return results
    rows, cols = plan.tables_of(tables, _PROVIDER)
    values = replicate_values(plan, rows, cols, replicates=replicates, seed=seed)
    out = dict(results)
    for m in chosen:
        low, high, undefined = percentile_interval(values[m.name], ci)
        out[m.name] = Bootstrapped(results[m.name], low, high, replicates, level=ci, undefined=undefined)
    return out


def compute_with_intervals(plan, *, ci: float, replicates: int, seed: int, progress: bool = False) -> dict:
    """Count ``plan``'s tables once, finalize its measures and add their intervals (:func:`with_intervals`)."""
    from .plan import run_tables

    tables = run_tables([plan], progress=progress)[0]
    return with_intervals(plan, tables, plan.finalize(tables), ci=ci, replicates=replicates, seed=seed)
