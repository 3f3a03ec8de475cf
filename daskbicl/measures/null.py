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

Other random models (Gates & Ahn 2017, The impact of random models on
clustering similarity, JMLR 18): ``model="num"`` draws pred uniformly among
all partitions with its number of clusters, ``model="all"`` uniformly among
all partitions of its elements.  Either way only the cluster *sizes* are
random beyond the permutation model (given its sizes, a uniform partition
is a uniform shuffle), so a draw samples sizes, then a table with those
margins: still O(H·H' + L·L') per draw.  ``one_sided=True`` (the default)
keeps truth as it is, the right model against a gold standard; with
``one_sided=False`` truth is drawn from the same model too.

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
from .request import MAX_DRAWS, NULL_MODELS, check_options, resolve_params, select_measures
from .tables import Contingency

__all__ = ["MAX_DRAWS", "NullResult", "null"]

#: Dense table entries (H·H' + L·L') sampled per task; a single draw above MAX_TABLE_CELLS is refused.
_BATCH_CELLS = 1 << 22
MAX_TABLE_CELLS = 1 << 24
#: Random models (Gates & Ahn 2017): fixed cluster sizes, fixed number of clusters, any partition.
MODELS = NULL_MODELS


class NullResult(NamedTuple):
    """One measure under the null model.

    ``p_value`` is the permutation p-value ``(1 + #{draws at least as good
    as observed}) / (draws + 1)``, "good" meaning higher for similarities
    and lower for errors (``greater_is_better``).

    ``adjusted`` is the measure corrected for chance under the model,
    ``(observed − mean) / (perfect − mean)`` (1 = perfect, 0 = as good as
    chance; ``perfect`` is the measure's value for identical inputs, so an
    error such as CE gives ``1 − observed/mean``).  ``mean`` is estimated
    from the draws, so ``adjusted`` is an estimate too: ``adjusted_low`` and
    ``adjusted_high`` bound it with ``mean ± 1.96 std/√draws`` (a 95 %
    normal interval).  nan when the measure has no fixed perfect value or
    ``mean`` equals it.
    """

    observed: float
    mean: float
    std: float
    p_value: float
    draws: int
    greater_is_better: bool
    adjusted: float = math.nan
    adjusted_low: float = math.nan
    adjusted_high: float = math.nan
    model: str = "perm"
    one_sided: bool = True


def _greater_is_better(m: Measure) -> bool:
    """Errors (CE, VI: perfect at their lower bound) are better when lower; everything else when higher."""
    return not (m.perfect == m.bounds[0])


def _margins(table: Table, model: str, one_sided: bool, rng, urns) -> tuple[np.ndarray, np.ndarray]:
    """Truth and pred cluster sizes of one draw: pred's from the model, truth's too when two-sided."""
    from ..kernels.coclustering import random_partitions

    def draw(sizes, side):
        if model == "perm":
            return sizes
        if model == "num":
            return random_partitions.sizes_num(int(sizes.sum()), len(sizes), rng)
        return random_partitions.sizes_all(int(sizes.sum()), rng, urns[side])

    a, b = table.truth_sizes(), table.pred_sizes()
    return (a if one_sided else draw(a, 0)), draw(b, 1)


def _draw_batch(rows: Table, cols: Table, measures, params, size: int, seed, model: str = "perm",
                one_sided: bool = True) -> dict[str, np.ndarray]:
    """``size`` draws of every measure on random tables under ``model`` (margins of ``rows``, ``cols``)."""
    from scipy.stats import random_table

    rng = np.random.default_rng(seed)
    out = {m.name: np.empty(size) for m in measures}
    if model == "perm":  # margins fixed: one batched call per axis
        row_draws = random_table(rows.truth_sizes(), rows.pred_sizes()).rvs(size, random_state=rng)
        col_draws = random_table(cols.truth_sizes(), cols.pred_sizes()).rvs(size, random_state=rng)
    urns = _urns(rows, cols, model)
    for i in range(size):
        if model == "perm":
            tables = (Table.from_dense(row_draws[i]), Table.from_dense(col_draws[i]))
        else:
            tables = tuple(Table.from_dense(random_table(*_margins(t, model, one_sided, rng, urns[k]))
                                            .rvs(random_state=rng)) for k, t in enumerate((rows, cols)))
        for m in measures:
            out[m.name][i] = float(m.finalize(tables, **m.finalize_params(params[m.name])))
    return out


def _urns(rows: Table, cols: Table, model: str):
    """Stam's urn distributions per axis and side for model "all" (computed once per batch)."""
    from ..kernels.coclustering import random_partitions

    if model != "all":
        return (None, None), (None, None)
    return tuple((random_partitions.urn_distribution(t.n),) * 2 for t in (rows, cols))


def _check_feasible(rows: Table, cols: Table, model: str, one_sided: bool) -> None:
    """Refuse up front what a draw could not do: a "num" rejection rate near 0, "all" tables too large."""
    from ..kernels.coclustering import random_partitions

    for table, axis in ((rows, "row"), (cols, "column")):
        sides = (("pred", table.shape[1]),) if one_sided else (("truth", table.shape[0]), ("pred", table.shape[1]))
        if model == "num":
            for side, k in sides:
                rate = random_partitions.num_acceptance(table.n, k)
                if rate < 1e-3:
                    raise TooLargeError(
                        f"model='num' draws {side} {axis} cluster sizes by rejection, and {k:,} clusters of "
                        f"{table.n:,} {axis}s leave one empty too often (acceptance {rate:.1e}); use model='perm'")
        if model == "all":
            top = int(random_partitions.urn_distribution(table.n)[0].max())
            cells = top * (table.shape[0] if one_sided else top)
            if cells > MAX_TABLE_CELLS:
                raise TooLargeError(
                    f"model='all' draws partitions of the {table.n:,} {axis}s with up to {top:,} clusters: tables "
                    f"of up to {cells:,} cells (at most {MAX_TABLE_CELLS:,}); use model='num' or 'perm'")


def _adjusted(obs: float, mean: float, std: float, draws: int, perfect: float) -> tuple[float, float, float]:
    """``(obs − mean)/(perfect − mean)`` and its bounds for ``mean ± 1.96 std/√draws``."""
    def adjust(e):
        den = perfect - e
        return (obs - e) / den if den != 0 else math.nan

    if not math.isfinite(perfect) or perfect == mean:
        return math.nan, math.nan, math.nan
    half = 1.96 * std / math.sqrt(draws)
    ends = sorted(adjust(mean + d) for d in (-half, half))
    return adjust(mean), ends[0], ends[1]


def null(truth, pred=None, *, measures=None, n: int = 999, seed=None, model: str = "perm", one_sided: bool = True,
         unassigned: str = "error", progress: bool = False, storage_options: dict | None = None,
         **params) -> dict[str, NullResult]:
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
    model : {"perm", "num", "all"}
        The random model (Gates & Ahn 2017): ``"perm"`` (default) shuffles
        the labels, cluster sizes fixed; ``"num"`` draws uniformly among
        the partitions with the same number of clusters; ``"all"`` among all
        partitions of the rows (columns).
    one_sided : bool
        True (default): truth stays as it is and only pred is random (the
        model against a gold standard); False: truth is drawn from the model
        too.  Under ``"perm"`` both give the same distribution.
    unassigned, progress, **params
        As for :func:`daskbicl.score`.
    storage_options : dict, optional
        fsspec options for stores given as URLs, as for :func:`daskbicl.score`.

    Returns
    -------
    dict of str to NullResult
        ``observed``, ``mean`` and ``std`` of the null draws, ``p_value``,
        and ``adjusted`` (the measure corrected for chance under the model)
        with its 95 % interval ``adjusted_low`` .. ``adjusted_high``.

    Examples
    --------
    >>> import daskbicl
    >>> z = [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
    >>> r = daskbicl.null((z, [0, 1]), (z, [0, 1]), measures="ari_rows", n=99, seed=0)["ari_rows"]
    >>> r.observed, r.p_value   # identical partitions: no shuffle does as well
    (1.0, 0.01)
    """
    from .api import contingency, score

    options = check_options(n=n, seed=seed, unassigned=unassigned, model=model, one_sided=one_sided)
    draws, seed, unassigned = options["n"], options["seed"], options["unassigned"]
    model, one_sided = options["model"], options["one_sided"]
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
        tables = contingency(truth, pred, unassigned=unassigned, progress=progress, storage_options=storage_options)
    rows, cols = tables.row_table, tables.col_table
    cells = math.prod(rows.shape) + math.prod(cols.shape)
    if cells > MAX_TABLE_CELLS:
        raise TooLargeError(
            f"a null draw samples dense tables of {rows.shape[0]:,} x {rows.shape[1]:,} and "
            f"{cols.shape[0]:,} x {cols.shape[1]:,} clusters ({cells:,} cells, at most {MAX_TABLE_CELLS:,})"
        )
    _check_feasible(rows, cols, model, one_sided)
    observed = score(tables, measures=[m.name for m in selected], **params)
    per_task = max(1, min(draws, _BATCH_CELLS // max(cells, 1)))
    sizes = [per_task] * (draws // per_task) + ([draws % per_task] if draws % per_task else [])
    seeds = np.random.SeedSequence(seed).spawn(len(sizes))
    tasks = [dask.delayed(_draw_batch, pure=False)(rows, cols, selected, resolved, size, s, model, one_sided)
             for size, s in zip(sizes, seeds)]
    batches = compute(*tasks, progress=progress)
    out = {}
    for m in selected:
        values = np.concatenate([b[m.name] for b in batches])
        obs = observed[m.name]
        higher = _greater_is_better(m)
        tol = 1e-12 * max(1.0, abs(obs))  # draws equal to the observed value up to rounding count as ties
        as_good = int(np.count_nonzero(values >= obs - tol if higher else values <= obs + tol))
        mean, std = float(values.mean()), float(values.std(ddof=1)) if draws > 1 else 0.0
        out[m.name] = NullResult(float(obs), mean, std, (1 + as_good) / (draws + 1), draws, higher,
                                 *_adjusted(float(obs), mean, std, draws, m.perfect), model, one_sided)
    return out
