"""The precision–recall tradeoff space from stores (docs/measures/tradeoff.md).

A *sweep* is one algorithm's results across its parameter, stored as a
biclustering whose biclusters are the results; the truth has one target
bicluster.  :func:`tradeoff` counts each sweep against the truth (one K x L
table pass per sweep, all in one computation), takes every result's
(precision, recall) and returns the optimal tradeoff curve of each sweep,
its application domain and, for two or more sweeps, their comparison — as
data (pandas / xarray), with figures one call away.  A co-clustering (truth
or sweep) is accepted as the biclustering of its non-empty blocks (docs/guide/data-model.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..engine.blocks import as_biclustering
from ..errors import InputError
from ..io.inputs import as_input, opened
from ..kernels.bicluster.precision_recall import corrected_precision_recall_of
from ..locations import redact
from ..measures.bicluster import prepare_tables
from ..measures.plan import ScorePlan, run_tables
from ..measures.request import check_options
from ..measures.weighted_indices import DEFAULT_INDEX
from . import space as tradeoff_space

__all__ = ["SweepTradeoff", "tradeoff"]

#: How :func:`tradeoff` and ``daskbicl tradeoff`` spell the drop_empty option.
DROP_EMPTY_HINT = "drop_empty=True (CLI: daskbicl tradeoff --drop-empty)"


@dataclass(frozen=True)
class SweepTradeoff:
    """Tradeoff analysis of one or more sweeps against one target bicluster.

    Attributes
    ----------
    index : str
        The weighted index (kulczynski, fmeasure, folke, jaccard).
    results : pandas.DataFrame
        One row per result: ``algorithm``, ``result``, ``pre``, ``rec``,
        ``size`` (|X|), ``pre_corrected``, ``rec_corrected`` (docs/measures/bicluster.md
        corrected precision and recall), ``kept`` (satisfies ``pre_min`` /
        ``rec_min``) and ``fraction_uninformative`` (share of λ ∈ [0, 1]
        where the result scores below predicting the whole matrix).
    optimal : dict
        Algorithm -> :class:`~daskbicl.tradeoffs.space.Tradeoff` (intervals
        with exact breakpoints and winners, AUC, partial and weighted AUC),
        for every algorithm not in :attr:`excluded`.
    domain : dict
        Algorithm -> :class:`~daskbicl.tradeoffs.space.ApplicationDomain`.
    comparison : Comparison or None
        With two or more sweeps: the λ intervals on which each algorithm's
        optimal curve is highest.
    truth_size, n_cells : int
        |B| and |D|.
    pre_min, rec_min : float or None
        The constraints the analysis was made with.
    excluded : tuple
        Algorithms with no result satisfying the constraints (only with two
        or more sweeps; with one sweep that is an error).
    dropped : dict
        Algorithm -> names of the empty results ignored with ``drop_empty``.
    """

    index: str
    results: pd.DataFrame
    optimal: dict
    domain: dict
    comparison: object
    truth_size: int
    n_cells: int
    pre_min: float | None = None
    rec_min: float | None = None
    excluded: tuple = ()
    dropped: dict = field(default_factory=dict)

    @property
    def algorithms(self) -> list[str]:
        """Every sweep's name, in order (including :attr:`excluded` ones)."""
        return list(dict.fromkeys(self.results["algorithm"]))

    def for_index(self, index: str) -> SweepTradeoff:
        """The same analysis under another index, from the (pre, rec) already computed.

        No data is read again: only the curves, intervals, AUC and
        application domain are recomputed.
        """
        index = check_options(index=index)["index"]
        if index == self.index:
            return self
        return _analyse(
            self.results.drop(columns=["fraction_uninformative"]), self.algorithms, index,
            self.truth_size, self.n_cells, self.pre_min, self.rec_min, self.dropped,
        )

    def summary(self) -> dict:
        """A JSON-ready summary (what ``daskbicl tradeoff --json`` prints)."""
        out = {
            "index": self.index,
            "truth_size": self.truth_size,
            "n_cells": self.n_cells,
            "constraints": {"pre_min": self.pre_min, "rec_min": self.rec_min},
            "algorithms": {},
        }
        for alg, t in self.optimal.items():
            out["algorithms"][str(alg)] = {
                "auc": t.auc,
                "intervals": _records(t.intervals),
                "excluded": [str(x) for x in t.excluded],
            }
        out["excluded_algorithms"] = [str(a) for a in self.excluded]
        out["dropped_empty"] = {str(a): [str(x) for x in v] for a, v in self.dropped.items()}
        out["results"] = _records(self.results)
        if self.comparison is not None:
            out["comparison"] = _records(self.comparison.intervals)
        return out

    # ------------------------------------------------------------------ figures
    def _indices(self, indices) -> list[str]:
        if indices is None:
            return [self.index]
        out = [indices] if isinstance(indices, str) else list(indices)
        if not out:
            raise InputError("indices: give at least one index")
        return [check_options(index=idx)["index"] for idx in out]

    def _suffix(self) -> str:
        text = tradeoff_space.constraint_text(self.pre_min, self.rec_min).replace(">=", "≥")
        return f" ({text})" if text else ""

    def plot(self, path=None, *, indices=None, detail: bool = True, n_grid: int = 501):
        """The tradeoff-space figure of exactly the data returned.

        One sweep: one panel per index with each kept result's curve, the
        optimal curve (bold), its breakpoints, each interval's winner and
        the application domain — the same intervals and AUC as
        :attr:`optimal` (results removed by ``pre_min`` / ``rec_min`` are
        not drawn).  Several sweeps: per index, the comparison panel first
        and, with ``detail=True``, one such panel per algorithm.  Panels
        are laid out one row per index (the comparison first, then each
        algorithm), so every panel is used.

        Parameters
        ----------
        path : str or path, optional
            Write the figure there (PNG/SVG/PDF by suffix).
        indices : str or sequence of str, optional
            One panel (row) per index; default :attr:`index`.  Other
            indices are computed from the (pre, rec) already known.
        detail : bool
            With several sweeps, add each algorithm's own panel.
        n_grid : int
            Points of the λ grid (the breakpoints are added).

        Returns
        -------
        matplotlib.figure.Figure
        """
        from .. import plot
        from ..plot._common import LABELS, panel_rows

        indices = self._indices(indices)
        several = self.comparison is not None
        algs = list(self.optimal)
        per_index = (1 + (len(algs) if detail else 0)) if several else 1
        fig, grid = panel_rows(len(indices), per_index)  # one row per index: a row answers one question
        for row, idx in zip(grid, indices):
            st = self.for_index(idx)
            label = LABELS[idx]
            if several:
                title = f"Algorithm comparison — {label}{self._suffix()}"
                if st.excluded:
                    title += f"\nexcluded (no result meets the constraints): {', '.join(map(str, st.excluded))}"
                plot.plot_comparison(st.comparison, ax=row[0], n_grid=n_grid, title=title)
                panels = list(zip(row[1:], algs))
            else:
                panels = [(row[0], algs[0])]
            for ax, alg in panels:
                plot.plot_tradeoff(
                    st.optimal[alg], domain=st.domain[alg], ax=ax, n_grid=n_grid,
                    title=f"{alg} — {label}{self._suffix()}",
                )
        if path is not None:
            plot.save(fig, path)
        return fig

    def _pr_args(self, index: str):
        """Points of the PR figures: one group per algorithm; only the results that win some λ named."""
        res = self.results
        several = len(self.algorithms) > 1
        st = self.for_index(index)
        wins = {(alg, str(w)) for alg, opt in st.optimal.items() for w in opt.intervals["winner"]}
        return {
            "names": list(res["result"]),
            "groups": list(res["algorithm"]) if several else None,
            "highlight": [(a, str(r)) in wins for a, r in zip(res["algorithm"], res["result"])],
        }

    def plot_pr(self, path=None, *, index: str | None = None, lam: float = 0.5,
                levels=(0.2, 0.4, 0.6, 0.8)):
        """Every result in precision–recall space (see :func:`daskbicl.plot.plot_pr_space`).

        Isolines of ``index`` (default :attr:`index`) at ``lam``, the
        random-result line and the unreachable region for |B| and |D|; one
        colour per algorithm with several sweeps.  The results that are best
        for some λ (for ``index``) are named; the others are drawn faded.  Returns the Figure and
        writes it to ``path`` when given.
        """
        from .. import plot

        index = index or self.index
        fig = plot.plot_pr_space(
            self.results["pre"].to_numpy(), self.results["rec"].to_numpy(), index=index, lam=lam,
            levels=levels, truth_size=self.truth_size, n_cells=self.n_cells, **self._pr_args(index),
        )
        if path is not None:
            plot.save(fig, path)
        return fig

    def plot_corrected_pr(self, path=None, *, index: str | None = None, lam: float = 0.5,
                          levels=(0.2, 0.4, 0.6, 0.8)):
        """Every result in the corrected precision–recall space
        (see :func:`daskbicl.plot.plot_corrected_pr_space`), from the
        ``pre_corrected`` and ``rec_corrected`` columns of :attr:`results`.
        """
        from .. import plot

        index = index or self.index
        fig = plot.plot_corrected_pr_space(
            self.results["pre_corrected"].to_numpy(), self.results["rec_corrected"].to_numpy(),
            index=index, lam=lam, levels=levels, **self._pr_args(index),
        )
        if path is not None:
            plot.save(fig, path)
        return fig


def _records(df: pd.DataFrame) -> list[dict]:
    return [{k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()} for row in df.to_dict("records")]


def _analyse(results: pd.DataFrame, algorithms: Sequence[str], index: str, truth_size: int,
             n_cells: int, pre_min, rec_min, dropped: dict) -> SweepTradeoff:
    """Optimal curves, domains and comparison from the per-result (pre, rec)."""
    data, domain, frac = {}, {}, []
    for alg in algorithms:
        res = results[results["algorithm"] == alg]
        pre, rec, ids = res["pre"].to_numpy(), res["rec"].to_numpy(), list(res["result"])
        data[alg] = (pre, rec, ids)
        domain[alg] = tradeoff_space.application_domain(
            pre, rec, truth_size=truth_size, n_cells=n_cells, names=ids, index=index
        )
        frac.append(domain[alg].fraction_uninformative.to_numpy())
    if len(algorithms) == 1:
        (alg,) = algorithms
        try:
            optimal = {alg: tradeoff_space.optimal_tradeoff(*data[alg][:2], names=data[alg][2], index=index,
                                                pre_min=pre_min, rec_min=rec_min)}
        except InputError as err:
            raise InputError(f"sweep {alg!r}: {err}") from None
        comparison, excluded = None, ()
    else:
        comparison = tradeoff_space.compare_algorithms(data, index=index, pre_min=pre_min, rec_min=rec_min)
        optimal, excluded = dict(comparison.tradeoffs), comparison.excluded
    kept = np.ones(len(results), dtype=bool)
    for column, bound in (("pre", pre_min), ("rec", rec_min)):
        if bound is not None:
            kept &= results[column].to_numpy() >= float(bound)
    results = results.assign(kept=kept, fraction_uninformative=np.concatenate(frac))
    return SweepTradeoff(index, results.reset_index(drop=True), optimal, domain, comparison,
                         truth_size, n_cells, pre_min, rec_min, tuple(excluded), dict(dropped))


def _select_target(truth, label):
    """The truth restricted to its target bicluster (by coordinate label or position)."""
    K = truth.sizes["bicluster"]
    if label is None:
        if K != 1:
            raise InputError(
                f"truth has {K} biclusters; the tradeoff space is about one target bicluster: "
                "choose it with truth_bicluster= (CLI: --truth-bicluster)"
            )
        return truth
    if "bicluster" not in truth.coords:
        try:
            pos = int(label) if not isinstance(label, float) or float(label).is_integer() else None
        except (TypeError, ValueError):
            pos = None
        if pos is None or not 0 <= pos < K:
            raise InputError(
                f"truth has no bicluster labels, so truth_bicluster is a position 0..{K - 1}; "
                f"got {label!r}"
            )
        return truth.isel(bicluster=[pos])
    labels = truth.indexes["bicluster"]
    key = _match_label(labels, label)
    if key is None:
        shown = ", ".join(repr(x) for x in labels[:8].tolist()) + (", ..." if K > 8 else "")
        raise InputError(f"truth has no bicluster {label!r} (its biclusters: {shown})")
    return truth.sel(bicluster=[key])


def _match_label(labels: pd.Index, label):
    """``label`` as an element of ``labels``: as given, converted to their dtype, or by text."""
    candidates = [label]
    kind = labels.dtype.kind
    try:
        if kind in "iu":
            number = float(label)
            if number.is_integer():
                candidates.append(int(number))
        elif kind == "f":
            candidates.append(float(label))
    except (TypeError, ValueError):
        pass
    for c in candidates:
        try:
            if c in labels:
                return c
        except TypeError:
            continue
    text = [x for x in labels.tolist() if str(x) == str(label)]
    return text[0] if len(text) == 1 else None


def tradeoff(
    truth,
    *sweeps,
    index: str = DEFAULT_INDEX,
    names=None,
    truth_bicluster=None,
    pre_min: float | None = None,
    rec_min: float | None = None,
    drop_empty: bool = False,
    progress: bool = False,
    unassigned: str | None = None,
    storage_options: dict | None = None,
) -> SweepTradeoff:
    """Tradeoff space of one or more parameter sweeps against a target bicluster.

    Parameters
    ----------
    truth : Dataset, path or tuple
        A biclustering with one target bicluster (or several, choosing one
        with ``truth_bicluster``).  A co-clustering is taken as the
        biclustering of its blocks (labelled ``"h/l"``).
    *sweeps : Dataset or path
        Biclusterings (or co-clusterings: one result per block); each one
        algorithm's results across its parameter.
    index : {"fmeasure", "jaccard", "kulczynski", "folke"}
    names : sequence of str, optional
        Algorithm names (default: the store paths, secrets in URLs redacted, or ``sweep0``, ...).
    truth_bicluster : hashable, optional
        The target bicluster when the truth has several: its coordinate
        label (converted to the coordinate's dtype, so ``"5"`` selects the
        integer label 5) or, when the truth has no bicluster coordinate,
        its position.
    pre_min, rec_min : float, optional
        Keep only results with precision / recall at least this.  With two
        or more sweeps, a sweep with no such result is left out and listed
        in :attr:`SweepTradeoff.excluded`.
    drop_empty : bool
        Ignore results (and a target) with no row or no column instead of
        raising; the ignored results are listed in
        :attr:`SweepTradeoff.dropped`.
    progress : bool
        Progress bar on stderr while counting.
    unassigned : {"error", "cluster", "singleton"}, optional
        For co-clustering inputs: what unassigned labels (NaN, None, pandas
        NA, negative integers) mean, as in :func:`daskbicl.score`.  Default
        "error".
    storage_options : dict, optional
        fsspec options for the truth and sweeps given as URLs, as for
        :func:`daskbicl.score`.

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

    # the request is checked before any input is opened
    options = check_options(index=index, drop_empty=drop_empty, unassigned=unassigned, pre_min=pre_min,
                            rec_min=rec_min)
    index, drop_empty, unassigned = options["index"], options["drop_empty"], options["unassigned"]
    pre_min, rec_min = options["pre_min"], options["rec_min"]
    if not sweeps:
        raise InputError("tradeoff needs at least one sweep (a biclustering of results)")
    if names is None:
        # a store's location as its name, its secrets (a password, a signed URL's token) redacted
        names = [redact(s) if isinstance(s, str) else f"sweep{i}" for i, s in enumerate(sweeps)]
    names = [str(n) for n in names]
    if len(names) != len(sweeps) or len(set(names)) != len(names):
        raise InputError(f"need {len(sweeps)} distinct algorithm names, got {names}")
    kinds = ("biclustering", "partition")
    truth = opened(truth, "truth", storage_options)
    sweeps = tuple(opened(sweep, f"sweep {role}", storage_options) for role, sweep in zip(names, sweeps))
    truth = _select_target(as_biclustering(as_input(truth, "truth", kinds=kinds, unassigned=unassigned), "truth"),
                           truth_bicluster)
    plans = [
        ScorePlan.build(truth, as_biclustering(as_input(sweep, f"sweep {role}", kinds=kinds, unassigned=unassigned),
                                               f"sweep {role}"), measures=[],
                        tables=["bicluster"], roles=("truth", f"sweep {role}"))
        for role, sweep in zip(names, sweeps)
    ]
    computed = [plan.tables_of(t, "bicluster") for plan, t in zip(plans, run_tables(plans, progress=progress))]
    rows, dropped = [], {}
    truth_size = n_cells = None
    for alg, tables in zip(names, computed):
        all_ids = np.asarray(tables.pred_ids)
        tables = prepare_tables(tables, drop_empty, roles=("truth", f"sweep {alg!r}"), hint=DROP_EMPTY_HINT)
        ids = tables.pred_ids.tolist()
        if len(ids) < len(all_ids):
            dropped[alg] = tuple(x for x in all_ids.tolist() if x not in set(ids))
        if not ids:
            raise InputError(f"sweep {alg!r} has no non-empty result left after drop_empty")
        inter = tables.rows.shared[0] * tables.cols.shared[0]
        size = tables.rows.pred_sizes * tables.cols.pred_sizes
        truth_size = int(tables.rows.truth_sizes[0]) * int(tables.cols.truth_sizes[0])
        n_cells = tables.n_cells
        pre_c, rec_c = corrected_precision_recall_of(tables)
        for k, name in enumerate(ids):
            rows.append({"algorithm": alg, "result": name, "pre": float(inter[k] / size[k]),
                         "rec": float(inter[k] / truth_size), "size": int(size[k]),
                         "pre_corrected": float(pre_c[0, k]), "rec_corrected": float(rec_c[0, k])})
    results = pd.DataFrame(rows)
    return _analyse(results, names, index, truth_size, n_cells, pre_min, rec_min, dropped)
