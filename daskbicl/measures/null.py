"""A null model for every co-clustering measure: how far from chance is a score?

Under the permutation model the row labels of pred are shuffled among the
rows and its column labels among the columns, margins fixed.  The row
contingency table of such a shuffle is a random table with the observed
margins, sampled exactly by Patefield's algorithm
(:func:`scipy.stats.random_table`), and so is the column table,
independently.  The cell table of a co-clustering is the Kronecker product
of the two, so every co-clustering measure of a random co-clustering pair
follows from two small sampled tables: a draw costs O(H·H' + L·L'),
whatever the number of rows and columns.

Draws run as Dask tasks (batches with independent seeds from one
:class:`numpy.random.SeedSequence`), on the active ``distributed.Client``
when there is one.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import dask
import numpy as np

from ..errors import InputError, MeasureError, TooLargeError
from ..kernels.coclustering.contingency import Table
from ..scheduling import compute
from .registry import Measure
from .request import MAX_DRAWS, check_options, resolve_params, select_measures
from .tables import Contingency

__all__ = ["MAX_DRAWS", "NullResult", "null"]

#: Dense table entries (H·H' + L·L') sampled per task; a single draw above MAX_TABLE_CELLS is refused.
_BATCH_CELLS = 1 << 22
MAX_TABLE_CELLS = 1 << 24


class NullResult(NamedTuple):
    """One measure under the null model.

    ``p_value`` is the permutation p-value ``(1 + #{draws at least as good
    as observed}) / (draws + 1)``, "good" meaning higher for similarities
    and lower for errors (``greater_is_better``).
    """

    observed: float
    mean: float
    std: float
    p_value: float
    draws: int
    greater_is_better: bool


def _greater_is_better(m: Measure) -> bool:
    """Errors (CE, VI: perfect at their lower bound) are better when lower; everything else when higher."""
    return not (m.perfect == m.bounds[0])


def _draw_batch(rows: Table, cols: Table, measures, params, size: int, seed) -> dict[str, np.ndarray]:
    """``size`` draws of every measure on random tables with the margins of ``rows`` and ``cols``."""
    from scipy.stats import random_table

    rng = np.random.default_rng(seed)
    row_draws = random_table(rows.truth_sizes(), rows.pred_sizes()).rvs(size, random_state=rng)
    col_draws = random_table(cols.truth_sizes(), cols.pred_sizes()).rvs(size, random_state=rng)
    out = {m.name: np.empty(size) for m in measures}
    for i in range(size):
        tables = (Table.from_dense(row_draws[i]), Table.from_dense(col_draws[i]))
        for m in measures:
            out[m.name][i] = float(m.finalize(tables, **params[m.name]))
    return out


def null(truth, pred=None, *, measures=None, n: int = 999, seed=None, unassigned: str = "error",
         progress: bool = False, **params) -> dict[str, NullResult]:
    """Every co-clustering measure of ``truth`` and ``pred`` against its permutation null.

    Parameters
    ----------
    truth, pred
        Co-clusterings in any form :func:`daskbicl.score` accepts, or one
        :class:`~daskbicl.measures.tables.Contingency` (``pred`` None).
    measures : str or list of str, optional
        Co-clustering measures (those finalized from the two contingency
        tables); default the published ones.
    n : int
        Number of null draws (default 999, so p-values are multiples of 1/1000).
    seed : int, optional
        Seed of the draws: the same seed gives the same draws, on any
        scheduler and any number of workers.
    unassigned, progress, **params
        As for :func:`daskbicl.score`.

    Returns
    -------
    dict of str to NullResult
        ``observed``, ``mean`` and ``std`` of the null draws, ``p_value``.

    Examples
    --------
    >>> import daskbicl
    >>> z = [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
    >>> r = daskbicl.null((z, [0, 1]), (z, [0, 1]), measures="ari_rows", n=99, seed=0)["ari_rows"]
    >>> r.observed, r.p_value   # identical partitions: no shuffle does as well
    (1.0, 0.01)
    """
    from .api import contingency, score

    options = check_options(n=n, seed=seed, unassigned=unassigned)  # before anything is counted
    draws, seed, unassigned = options["n"], options["seed"], options["unassigned"]
    selected = select_measures(measures, "partition", "partition")
    for m in selected:
        if m.provider != "partition":
            raise MeasureError(
                f"the null model covers the co-clustering measures (finalized from the two contingency tables); "
                f"{m.name!r} is a {m.family} measure"
            )
    resolved = resolve_params(selected, params)
    if isinstance(truth, Contingency):
        if pred is not None:
            raise InputError("pass either a Contingency or truth and pred, not both")
        tables = truth
    else:
        tables = contingency(truth, pred, unassigned=unassigned, progress=progress)
    rows, cols = tables.row_table, tables.col_table
    cells = math.prod(rows.shape) + math.prod(cols.shape)
    if cells > MAX_TABLE_CELLS:
        raise TooLargeError(
            f"a null draw samples dense tables of {rows.shape[0]:,} x {rows.shape[1]:,} and "
            f"{cols.shape[0]:,} x {cols.shape[1]:,} clusters ({cells:,} cells, at most {MAX_TABLE_CELLS:,})"
        )
    observed = score(tables, measures=[m.name for m in selected], **params)
    per_task = max(1, min(draws, _BATCH_CELLS // max(cells, 1)))
    sizes = [per_task] * (draws // per_task) + ([draws % per_task] if draws % per_task else [])
    seeds = np.random.SeedSequence(seed).spawn(len(sizes))
    tasks = [dask.delayed(_draw_batch, pure=False)(rows, cols, selected, resolved, size, s)
             for size, s in zip(sizes, seeds)]
    batches = compute(*tasks, progress=progress)
    out = {}
    for m in selected:
        values = np.concatenate([b[m.name] for b in batches])
        obs = observed[m.name]
        higher = _greater_is_better(m)
        tol = 1e-12 * max(1.0, abs(obs))  # draws equal to the observed value up to rounding count as ties
        as_good = int(np.count_nonzero(values >= obs - tol if higher else values <= obs + tol))
        out[m.name] = NullResult(float(obs), float(values.mean()), float(values.std(ddof=1)) if draws > 1 else 0.0,
                                 (1 + as_good) / (draws + 1), draws, higher)
    return out
