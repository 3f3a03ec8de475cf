"""The precision–recall tradeoff space from stores (SPEC §5).

A *sweep* is one algorithm's results across its parameter, stored as a
biclustering whose biclusters are the results; the truth has one target
bicluster.  :func:`tradeoff` counts each sweep against the truth (one K x L
table pass per sweep, all in one computation), takes every result's
(precision, recall) and returns the optimal tradeoff curve of each sweep,
its application domain and, for two or more sweeps, their comparison — as
data (pandas / xarray), with figures one call away.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .errors import InputError
from .kernels import tradeoff as KT

__all__ = ["SweepTradeoff", "tradeoff"]


@dataclass(frozen=True)
class SweepTradeoff:
    """Tradeoff analysis of one or more sweeps against one target bicluster.

    Attributes
    ----------
    index : str
        The weighted index (kulczynski, fmeasure, folke, jaccard).
    results : pandas.DataFrame
        One row per result: ``algorithm``, ``result``, ``pre``, ``rec``,
        ``size`` (|X|), ``fraction_uninformative`` (share of λ ∈ [0, 1] where
        the result scores below predicting the whole matrix).
    optimal : dict
        Algorithm -> :class:`~daskbicl.kernels.tradeoff.Tradeoff` (intervals
        with exact breakpoints and winners, AUC, partial and weighted AUC).
    domain : dict
        Algorithm -> :class:`~daskbicl.kernels.tradeoff.ApplicationDomain`.
    comparison : Comparison or None
        With two or more sweeps: the λ intervals on which each algorithm's
        optimal curve is highest.
    truth_size, n_cells : int
        |B| and |D|.
    """

    index: str
    results: pd.DataFrame
    optimal: dict
    domain: dict
    comparison: object
    truth_size: int
    n_cells: int

    def summary(self) -> dict:
        """A JSON-ready summary (what ``daskbicl tradeoff --json`` prints)."""
        out = {
            "index": self.index,
            "truth_size": self.truth_size,
            "n_cells": self.n_cells,
            "algorithms": {},
        }
        for alg, t in self.optimal.items():
            out["algorithms"][str(alg)] = {
                "auc": t.auc,
                "intervals": _records(t.intervals),
                "excluded": [str(x) for x in t.excluded],
            }
        out["results"] = _records(self.results)
        if self.comparison is not None:
            out["comparison"] = _records(self.comparison.intervals)
        return out

    def plot(self, path=None, *, indices=None):
        """The tradeoff-space figure (comparison panel when several sweeps).

        Returns the matplotlib Figure; writes it to ``path`` (PNG/SVG/PDF by
        suffix) when given.
        """
        from . import plot as P

        if self.comparison is not None:
            fig = P.plot_comparison(self.comparison)
        else:
            (alg,) = self.optimal
            res = self.results[self.results["algorithm"] == alg]
            fig = P.plot_tradeoff_space(
                res["pre"].to_numpy(), res["rec"].to_numpy(), names=list(res["result"]),
                index=indices or self.index, truth_size=self.truth_size, n_cells=self.n_cells,
            )
        if path is not None:
            P.save(fig, path)
        return fig


def _records(df: pd.DataFrame) -> list[dict]:
    return [{k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()} for row in df.to_dict("records")]


def tradeoff(
    truth,
    *sweeps,
    index: str = "fmeasure",
    names=None,
    truth_bicluster=None,
    pre_min: float | None = None,
    rec_min: float | None = None,
    progress: bool = False,
) -> SweepTradeoff:
    """Tradeoff space of one or more parameter sweeps against a target bicluster.

    Parameters
    ----------
    truth : Dataset, path or tuple
        A biclustering with one target bicluster (or several, choosing one
        with ``truth_bicluster``).
    *sweeps : Dataset or path
        Biclusterings; each one algorithm's results across its parameter.
    index : {"fmeasure", "jaccard", "kulczynski", "folke"}
    names : sequence of str, optional
        Algorithm names (default: the store paths, or ``sweep0``, ...).
    truth_bicluster : hashable, optional
        Coordinate label of the target bicluster when the truth has several.
    pre_min, rec_min : float, optional
        Keep only results with precision / recall at least this.

    Returns
    -------
    SweepTradeoff

    Examples
    --------
    >>> import daskbicl
    >>> truth = daskbicl.biclustering([[1, 1, 1, 1, 0, 0]], [[1, 1, 0]])
    >>> sweep = daskbicl.biclustering(
    ...     [[1, 1, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1]], [[1, 1, 0], [1, 1, 1]], bicluster=["tight", "loose"])
    >>> t = daskbicl.tradeoff(truth, sweep, index="fmeasure")
    >>> t.results[["result", "pre", "rec"]].round(3).to_dict("list")
    {'result': ['tight', 'loose'], 'pre': [1.0, 0.444], 'rec': [0.5, 1.0]}
    >>> t.optimal["sweep0"].intervals["winner"].tolist()
    ['tight', 'loose']
    """
    from .engine.bicluster import bicluster_tables
    from .engine.core import compute
    from .io.align import align
    from .io.validate import as_dataset
    from .measures.bicluster import prepare_tables

    if not sweeps:
        raise InputError("tradeoff needs at least one sweep (a biclustering of results)")
    if names is None:
        names = [s if isinstance(s, str) else f"sweep{i}" for i, s in enumerate(sweeps)]
    names = [str(n) for n in names]
    if len(names) != len(sweeps) or len(set(names)) != len(names):
        raise InputError(f"need {len(sweeps)} distinct algorithm names, got {names}")
    truth = as_dataset(truth, "truth", kinds=("biclustering",))
    if truth_bicluster is not None:
        if "bicluster" not in truth.coords or truth_bicluster not in truth.indexes["bicluster"]:
            raise InputError(f"truth has no bicluster {truth_bicluster!r}")
        truth = truth.sel(bicluster=[truth_bicluster])
    elif truth.sizes["bicluster"] != 1:
        raise InputError(
            f"truth has {truth.sizes['bicluster']} biclusters; the tradeoff space is about one target "
            "bicluster: choose it with truth_bicluster= (CLI: --truth-bicluster)"
        )
    graphs = []
    for role, sweep in zip(names, sweeps):
        t, s = align(truth, as_dataset(sweep, f"sweep {role}", kinds=("biclustering",)))
        graphs.append(bicluster_tables(t, s))
    computed = compute(*graphs, progress=progress)
    rows, optimal, domain = [], {}, {}
    truth_size = n_cells = None
    for alg, tables in zip(names, computed):
        tables = prepare_tables(tables)
        inter = tables.rows.shared[0] * tables.cols.shared[0]
        size = tables.rows.pred_sizes * tables.cols.pred_sizes
        truth_size = int(tables.rows.truth_sizes[0]) * int(tables.cols.truth_sizes[0])
        n_cells = tables.n_cells
        pre = inter / size
        rec = inter / truth_size
        ids = list(tables.pred_ids.tolist())
        optimal[alg] = KT.optimal_tradeoff(pre, rec, names=ids, index=index, pre_min=pre_min, rec_min=rec_min)
        domain[alg] = KT.application_domain(pre, rec, truth_size=truth_size, n_cells=n_cells, names=ids, index=index)
        frac = domain[alg].fraction_uninformative
        for name, p, r, x in zip(ids, pre, rec, size):
            rows.append({"algorithm": alg, "result": name, "pre": float(p), "rec": float(r),
                         "size": int(x), "fraction_uninformative": float(frac.get(name, 0.0))})
    comparison = None
    if len(sweeps) > 1:
        comparison = KT.compare_algorithms(optimal, index=index)
    return SweepTradeoff(index, pd.DataFrame(rows), optimal, domain, comparison, truth_size, n_cells)
