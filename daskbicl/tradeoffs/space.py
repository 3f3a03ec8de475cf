"""The tradeoff space as pandas objects: curves, optimal tradeoffs, application domains, comparisons.

The maths (the weighted indices, their exact upper envelope and its
closed-form areas) lives in :mod:`daskbicl.kernels.tradeoff.indices`, numpy only,
and takes the nameless formula records; the indices' names are those of
:mod:`daskbicl.measures.weighted_indices`.  This module turns it into the labelled tables users read:
:func:`tradeoff_curves`, :func:`optimal_tradeoff` (a :class:`Tradeoff`),
:func:`application_domain` and :func:`compare_algorithms`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import InputError
from ..kernels.tradeoff.indices import (
    IndexFormula,
    below_segments,
    envelope_segments,
    index_integral,
    index_scalar,
    regular,
    unit,
)
from ..measures.request import check_options
from ..measures.weighted_indices import DEFAULT_INDEX, get_index, weighted_index

__all__ = [
    "ApplicationDomain",
    "Comparison",
    "Tradeoff",
    "application_domain",
    "compare_algorithms",
    "constraint_text",
    "optimal_tradeoff",
    "tradeoff_curves",
]


def _results(pre, rec, names) -> pd.DataFrame:
    p = unit("pre", pre)
    r = unit("rec", rec)
    if p.ndim != 1 or p.shape != r.shape:
        raise InputError(f"pre and rec must be 1-D of equal length, got {p.shape} and {r.shape}")
    if p.size == 0:
        raise InputError("need at least one result (pre, rec)")
    names = list(range(p.size)) if names is None else list(names)
    if len(names) != p.size:
        raise InputError(f"got {len(names)} names for {p.size} results")
    if len(set(names)) != len(names):
        raise InputError("result names must be unique")
    return pd.DataFrame({"name": names, "pre": p, "rec": r})


def tradeoff_curves(pre, rec, lam=None, *, names=None, index: str = DEFAULT_INDEX) -> pd.DataFrame:
    """Each result's curve :math:`I_\\lambda(pre_i, rec_i)` on a λ grid.

    Parameters
    ----------
    pre, rec : array_like, shape (n,)
    lam : array_like, optional
        Grid in [0, 1]; default 101 points.
    names : sequence of hashable, optional
        Column labels (default 0..n-1).
    index : str
        One of :data:`daskbicl.measures.weighted_indices.INDICES`.

    Returns
    -------
    pandas.DataFrame
        Index ``lam``, one column per result.

    Examples
    --------
    >>> tradeoff_curves([0.5, 1.0], [0.9, 0.2], [0, 0.5, 1], names=["a", "b"],
    ...                 index="kulczynski").round(3).to_dict("list")
    {'a': [0.5, 0.7, 0.9], 'b': [1.0, 0.6, 0.2]}
    """
    res = _results(pre, rec, names)
    lam = np.linspace(0, 1, 101) if lam is None else unit("lam", lam).ravel()
    values = weighted_index(
        res["pre"].to_numpy()[None, :], res["rec"].to_numpy()[None, :], lam[:, None], index
    )
    return pd.DataFrame(values, index=pd.Index(lam, name="lam"), columns=list(res["name"]))


def _formula(index) -> IndexFormula:
    """The maths of the index ``index`` names."""
    return get_index(index).formula


def _intervals_frame(res: pd.DataFrame, segs, index: str, label=None) -> pd.DataFrame:
    formula = _formula(index)
    rows = []
    for lo, hi, k in segs:
        p, r = float(res["pre"].iat[k]), float(res["rec"].iat[k])
        rows.append(
            {
                "lam_lo": lo,
                "lam_hi": hi,
                "winner": res["name"].iat[k],
                "pre": p,
                "rec": r,
                "area": index_integral(p, r, formula, lo, hi),
            }
        )
    df = pd.DataFrame(rows, columns=["lam_lo", "lam_hi", "winner", "pre", "rec", "area"])
    if label is not None:
        df.insert(2, "algorithm", [label[k] for _, _, k in segs])
    return df


@dataclass(frozen=True)
class Tradeoff:
    """The optimal tradeoff curve of a set of results, as data.

    Attributes
    ----------
    index : str
    results : pandas.DataFrame
        Columns ``name, pre, rec``: the results kept after the constraints.
    intervals : pandas.DataFrame
        Columns ``lam_lo, lam_hi, winner, pre, rec, area``: on each interval
        the optimal curve is the curve of ``winner``; ``area`` its integral.
    auc : float
        Area under the optimal curve on [0, 1].
    excluded : tuple
        Names removed by ``pre_min`` / ``rec_min``.
    """

    index: str
    results: pd.DataFrame
    intervals: pd.DataFrame
    auc: float
    excluded: tuple = field(default=())

    @property
    def breakpoints(self) -> np.ndarray:
        """λ where the best result changes (interior interval bounds)."""
        return self.intervals["lam_lo"].to_numpy()[1:]

    def winner_at(self, lam) -> np.ndarray:
        """Name of the best result at each λ (the left interval at a breakpoint).

        Consistent with :meth:`envelope` everywhere, end points included:
        at λ = 0 the winner is a result of largest ``pre`` and at λ = 1 one
        of largest ``rec`` — the interval's winner when it is one of them,
        otherwise the first listed (a result with ``rec = 0`` or ``pre = 0``
        is 0 on (0, 1), so it never appears in :attr:`intervals`, but it can
        be the best at an end point).

        Examples
        --------
        >>> t = optimal_tradeoff([1.0, 0.6], [0.0, 0.5], names=["r0", "b"])
        >>> t.winner_at([0.0, 0.5, 1.0]).tolist(), t.envelope([0.0, 0.5, 1.0]).round(3).tolist()
        (['r0', 'b', 'b'], [1.0, 0.545, 0.5])
        """
        lam = unit("lam", lam)
        flat = lam.ravel()
        k = np.searchsorted(self.intervals["lam_hi"].to_numpy(), flat, side="left")
        out = self.intervals["winner"].to_numpy()[np.minimum(k, len(self.intervals) - 1)]
        out[flat == 0] = self._end_winner("pre", 0)
        out[flat == 1] = self._end_winner("rec", -1)
        return out[0] if lam.ndim == 0 else out.reshape(lam.shape)

    def _end_winner(self, column: str, row: int):
        """The best result at λ = 0 (``column="pre"``) or λ = 1 (``"rec"``)."""
        values = self.results[column].to_numpy()
        if self.intervals[column].iat[row] >= values.max():
            return self.intervals["winner"].iat[row]
        return self.results["name"].iat[int(np.argmax(values))]

    def envelope(self, lam) -> np.ndarray:
        """The optimal curve :math:`\\max_i I_\\lambda(pre_i, rec_i)` at ``lam``."""
        lam = unit("lam", lam)
        iv = self.intervals
        k = np.minimum(np.searchsorted(iv["lam_hi"].to_numpy(), lam, side="left"), len(iv) - 1)
        out = weighted_index(iv["pre"].to_numpy()[k], iv["rec"].to_numpy()[k], lam, self.index)
        # at the end points a result that is 0 on (0, 1) may still be the best
        out = np.where(lam == 0, self.results["pre"].max(), out)
        return np.where(lam == 1, self.results["rec"].max(), out)

    def _continuous_envelope(self, lam: np.ndarray) -> np.ndarray:
        """The envelope with its one-sided limits at λ = 0 and 1 (for quadrature)."""
        iv = self.intervals
        k = np.minimum(np.searchsorted(iv["lam_hi"].to_numpy(), lam, side="left"), len(iv) - 1)
        p, r = iv["pre"].to_numpy()[k], iv["rec"].to_numpy()[k]
        out = weighted_index(p, r, lam, self.index)
        return np.where(regular(p, r, _formula(self.index)), out, 0.0)

    def curves(self, lam=None) -> pd.DataFrame:
        """Every kept result's curve (see :func:`tradeoff_curves`)."""
        return tradeoff_curves(
            self.results["pre"], self.results["rec"], lam, names=self.results["name"], index=self.index
        )

    def partial_auc(self, a: float, b: float, *, normalize: bool = False) -> float:
        """:math:`\\int_a^b \\max_i I_\\lambda\\,d\\lambda` (divided by b - a if ``normalize``)."""
        if not (0 <= a < b <= 1):
            raise InputError(f"need 0 <= a < b <= 1, got a={a}, b={b}")
        formula = _formula(self.index)
        total = sum(
            index_integral(p, r, formula, max(lo, a), min(hi, b))
            for lo, hi, p, r in self.intervals[["lam_lo", "lam_hi", "pre", "rec"]].itertuples(index=False)
        )
        return total / (b - a) if normalize else total

    def weighted_auc(self, density: Callable | Sequence[float], grid=None) -> float:
        """:math:`\\int_0^1 \\max_i I_\\lambda\\,\\rho(\\lambda)\\,d\\lambda / \\int_0^1 \\rho`.

        ``density`` is a callable ρ(λ) ≥ 0 (integrated with
        :func:`scipy.integrate.quad` piecewise on the intervals) or an array
        of values on ``grid`` (default an even grid on [0, 1]; trapezoid
        rule on the envelope's one-sided limits at 0 and 1, so accurate to
        the grid's resolution).
        """
        return _weighted_auc(self, density, grid)


def _weighted_auc(t: Tradeoff, density, grid) -> float:
    if callable(density):
        from scipy.integrate import quad

        num = den = 0.0
        opts = {"limit": 200, "epsabs": 1e-13, "epsrel": 1e-11}
        formula = _formula(t.index)
        for lo, hi, p, r in t.intervals[["lam_lo", "lam_hi", "pre", "rec"]].itertuples(index=False):
            kink = [k for k in formula.kinks if lo < k < hi] or None  # e.g. Jaccard at 1/2
            num += quad(
                lambda x, p=p, r=r: index_scalar(p, r, x, formula) * float(density(x)),
                lo,
                hi,
                points=kink,
                **opts,
            )[0]
            den += quad(lambda x: float(density(x)), lo, hi, points=kink, **opts)[0]
        probe = np.asarray([density(x) for x in np.linspace(0, 1, 101)], dtype=float)
        if np.any(probe < 0) or not den > 0:
            raise InputError("density must be non-negative with a positive integral on [0, 1]")
        return num / den
    rho = np.asarray(density, dtype=np.float64)
    grid = np.linspace(0, 1, rho.size) if grid is None else unit("grid", grid)
    if rho.ndim != 1 or grid.shape != rho.shape or rho.size < 2 or np.any(np.diff(grid) <= 0):
        raise InputError("density values need an increasing grid of the same length (>= 2)")
    if np.any(~np.isfinite(rho)) or np.any(rho < 0) or not np.trapezoid(rho, grid) > 0:
        raise InputError("density must be finite, non-negative, with a positive integral")
    env = t._continuous_envelope(grid)
    return float(np.trapezoid(env * rho, grid) / np.trapezoid(rho, grid))


def constraint_text(pre_min=None, rec_min=None) -> str:
    """The given bounds as text, e.g. ``"pre >= 0.3 and rec >= 0.5"`` (``""`` for none).

    Examples
    --------
    >>> constraint_text(rec_min=0.5)
    'rec >= 0.5'
    """
    parts = [f"{k} >= {v:g}" for k, v in (("pre", pre_min), ("rec", rec_min)) if v is not None]
    return " and ".join(parts)


def _kept(res: pd.DataFrame, pre_min, rec_min) -> np.ndarray:
    bounds = check_options(pre_min=pre_min, rec_min=rec_min)
    keep = np.ones(len(res), dtype=bool)
    for column in ("pre", "rec"):
        if bounds[f"{column}_min"] is not None:
            keep &= res[column].to_numpy() >= bounds[f"{column}_min"]
    return keep


def _constrain(res: pd.DataFrame, pre_min, rec_min) -> tuple[pd.DataFrame, tuple]:
    keep = _kept(res, pre_min, rec_min)
    if not keep.any():
        raise InputError(f"no result satisfies the constraints {constraint_text(pre_min, rec_min)}")
    return res[keep].reset_index(drop=True), tuple(res["name"][~keep].tolist())


def optimal_tradeoff(
    pre,
    rec,
    *,
    names=None,
    index: str = DEFAULT_INDEX,
    pre_min: float | None = None,
    rec_min: float | None = None,
) -> Tradeoff:
    """Optimal tradeoff curve, its intervals, breakpoints and AUC.

    .. math::

        I^*(\\lambda) = \\max_i I_\\lambda(pre_i, rec_i), \\qquad
        \\mathrm{AUC} = \\int_0^1 I^*(\\lambda)\\,d\\lambda

    Breakpoints are the closed-form crossings of the winning curves (see the
    module docstring); the AUC sums closed-form integrals per interval.

    Parameters
    ----------
    pre, rec : array_like, shape (n,)
        One point per result (e.g. an algorithm's parameter sweep).
    names : sequence of hashable, optional
        Result labels (default 0..n-1); must be unique.
    index : {"kulczynski", "fmeasure", "folke", "jaccard"}
    pre_min, rec_min : float, optional
        Keep only results with ``pre >= pre_min`` and ``rec >= rec_min``.

    Returns
    -------
    Tradeoff

    Examples
    --------
    >>> t = optimal_tradeoff([0.9, 0.5, 0.2], [0.3, 0.6, 0.95], names=["a", "b", "c"],
    ...                      index="kulczynski")
    >>> t.intervals[["lam_lo", "lam_hi", "winner"]].round(4).values.tolist()
    [[0.0, 0.5185, 'a'], [0.5185, 1.0, 'c']]
    >>> round(t.auc, 4)
    0.7565
    """
    index = check_options(index=index)["index"]
    bounds = check_options(pre_min=pre_min, rec_min=rec_min)
    pre_min, rec_min = bounds["pre_min"], bounds["rec_min"]
    res, excluded = _constrain(_results(pre, rec, names), pre_min, rec_min)
    segs = envelope_segments(res["pre"].to_numpy(), res["rec"].to_numpy(), _formula(index))
    iv = _intervals_frame(res, segs, index)
    return Tradeoff(index, res, iv, float(iv["area"].sum()), excluded)


# --------------------------------------------------------------------------- domain
@dataclass(frozen=True)
class ApplicationDomain:
    """Trivial results of one truth bicluster and where results fall below them.

    Attributes
    ----------
    index : str
    maximal, minimal : tuple of float
        ``(pre, rec)`` of X = D, ``(|B|/|D|, 1)``, and of a single true cell,
        ``(1, 1/|B|)``.
    uninformative : pandas.DataFrame
        Columns ``result, lam_lo, lam_hi``: the λ intervals on which the
        result's curve is strictly under the maximal result's curve.
    fraction_uninformative : pandas.Series
        Total length of those intervals, per result.
    """

    index: str
    maximal: tuple[float, float]
    minimal: tuple[float, float]
    uninformative: pd.DataFrame
    fraction_uninformative: pd.Series

    def maximal_curve(self, lam) -> np.ndarray:
        return weighted_index(*self.maximal, lam, self.index)

    def minimal_curve(self, lam) -> np.ndarray:
        return weighted_index(*self.minimal, lam, self.index)

    def is_uninformative(self, name: Hashable, lam) -> np.ndarray:
        """Boolean array: is ``lam`` inside an uninformative interval of ``name``."""
        lam = unit("lam", lam)
        iv = self.uninformative[self.uninformative["result"] == name]
        out = np.zeros(lam.shape, dtype=bool)
        for lo, hi in iv[["lam_lo", "lam_hi"]].itertuples(index=False):
            out |= (lam > lo) & (lam < hi)
        return out


def application_domain(
    pre, rec, *, truth_size: int, n_cells: int, names=None, index: str = DEFAULT_INDEX
) -> ApplicationDomain:
    """Maximal/minimal result curves and the uninformative λ of each result.

    The maximal result X = D has :math:`pre = |B|/|D|, rec = 1`; the minimal
    result (one true cell) :math:`pre = 1, rec = 1/|B|`.  A result is
    *uninformative* at λ when :math:`I_\\lambda(pre, rec) <
    I_\\lambda(|B|/|D|, 1)`: predicting the whole matrix would score higher.
    Crossings are closed-form (see the module docstring).

    Parameters
    ----------
    pre, rec : array_like, shape (n,)
    truth_size : int
        :math:`|B| \\geq 1`.
    n_cells : int
        :math:`|D| \\geq |B|`.
    names : sequence of hashable, optional
    index : str

    Returns
    -------
    ApplicationDomain

    Examples
    --------
    >>> d = application_domain([0.5], [0.5], truth_size=10, n_cells=100)
    >>> d.maximal
    (0.1, 1.0)
    >>> d.uninformative.round(4).to_dict("list")
    {'result': [0], 'lam_lo': [0.8889], 'lam_hi': [1.0]}
    """
    index = check_options(index=index)["index"]
    res = _results(pre, rec, names)
    b, D = int(truth_size), int(n_cells)
    if b < 1 or D < b:
        raise InputError(f"need 1 <= truth_size <= n_cells, got {b} and {D}")
    maximal, minimal = (b / D, 1.0), (1.0, 1.0 / b)
    formula = _formula(index)
    rows = [
        (name, lo, hi)
        for name, p, r in res.itertuples(index=False)
        for lo, hi in below_segments(p, r, maximal, formula)
    ]
    unin = pd.DataFrame(rows, columns=["result", "lam_lo", "lam_hi"])
    frac = (unin["lam_hi"] - unin["lam_lo"]).groupby(unin["result"]).sum()
    frac = frac.reindex(res["name"], fill_value=0.0).rename("fraction_uninformative")
    return ApplicationDomain(index, maximal, minimal, unin, frac)


# --------------------------------------------------------------------------- compare
@dataclass(frozen=True)
class Comparison:
    """Where each algorithm's optimal tradeoff curve is the highest.

    Attributes
    ----------
    index : str
    tradeoffs : dict
        Algorithm name -> its :class:`Tradeoff`.
    intervals : pandas.DataFrame
        Columns ``lam_lo, lam_hi, algorithm, area``: on each interval the
        optimal curve of ``algorithm`` is the highest (``area`` = integral of
        the overall optimal curve there).
    segments : pandas.DataFrame
        The same split further at each winning result change: columns
        ``lam_lo, lam_hi, algorithm, winner, pre, rec, area``.
    auc : pandas.Series
        AUC of each algorithm's optimal curve.
    excluded : tuple
        Algorithms left out because none of their results satisfies the
        ``pre_min`` / ``rec_min`` constraints (they have no optimal curve).
    """

    index: str
    tradeoffs: dict
    intervals: pd.DataFrame
    segments: pd.DataFrame
    auc: pd.Series
    excluded: tuple = field(default=())

    @property
    def breakpoints(self) -> np.ndarray:
        return self.intervals["lam_lo"].to_numpy()[1:]


def compare_algorithms(
    algorithms: Mapping[Hashable, object],
    *,
    index: str = DEFAULT_INDEX,
    pre_min: float | None = None,
    rec_min: float | None = None,
) -> Comparison:
    """Compare the optimal tradeoff curves of two or more algorithms.

    The best algorithm at λ is the one whose optimal curve is highest; since
    each optimal curve is a maximum over results, this is the owner of the
    best result overall.  Ties go to the algorithm listed first.

    Parameters
    ----------
    algorithms : mapping
        Name -> ``(pre, rec)``, ``(pre, rec, names)`` or a :class:`Tradeoff`
        (whose kept results are used).
    index : str
    pre_min, rec_min : float, optional
        Constraints applied to every algorithm.  An algorithm none of whose
        results satisfies them is left out of the comparison and listed in
        :attr:`Comparison.excluded` (an error only when every algorithm is).

    Returns
    -------
    Comparison

    Examples
    --------
    >>> c = compare_algorithms({"A": ([0.9, 0.6], [0.2, 0.6]), "B": ([0.3], [0.95])},
    ...                        index="kulczynski")
    >>> c.intervals[["lam_lo", "lam_hi", "algorithm"]].round(4).values.tolist()
    [[0.0, 0.4615, 'A'], [0.4615, 1.0, 'B']]
    >>> c = compare_algorithms({"A": ([0.9, 0.6], [0.2, 0.6]), "B": ([0.3], [0.95])}, pre_min=0.5)
    >>> c.excluded, c.intervals["algorithm"].tolist()
    (('B',), ['A'])
    """
    index = check_options(index=index)["index"]
    bounds = check_options(pre_min=pre_min, rec_min=rec_min)
    pre_min, rec_min = bounds["pre_min"], bounds["rec_min"]
    if len(algorithms) < 1:
        raise InputError("need at least one algorithm")
    tradeoffs, excluded = {}, []
    for name, spec in algorithms.items():
        if isinstance(spec, Tradeoff):
            pre, rec, names = spec.results["pre"], spec.results["rec"], spec.results["name"]
        else:
            pre, rec, *rest = spec
            names = rest[0] if rest else None
        try:
            if not _kept(_results(pre, rec, names), pre_min, rec_min).any():
                excluded.append(name)
                continue
            tradeoffs[name] = optimal_tradeoff(
                pre, rec, names=names, index=index, pre_min=pre_min, rec_min=rec_min
            )
        except InputError as err:
            raise InputError(f"algorithm {name!r}: {err}") from None
    if not tradeoffs:
        raise InputError(
            f"no algorithm has a result satisfying the constraints {constraint_text(pre_min, rec_min)}"
        )
    frames = [t.results.assign(algorithm=[a] * len(t.results)) for a, t in tradeoffs.items()]
    res = pd.concat(frames, ignore_index=True)
    label = res["algorithm"].tolist()
    segments = _intervals_frame(
        res, envelope_segments(res["pre"].to_numpy(), res["rec"].to_numpy(), _formula(index)), index, label
    )
    # an algorithm keeps its interval across its own internal breakpoints
    block = (segments["algorithm"] != segments["algorithm"].shift()).cumsum()
    iv = (
        segments.groupby(block, sort=False)
        .agg(
            lam_lo=("lam_lo", "first"),
            lam_hi=("lam_hi", "last"),
            algorithm=("algorithm", "first"),
            area=("area", "sum"),
        )
        .reset_index(drop=True)
    )
    auc = pd.Series({a: t.auc for a, t in tradeoffs.items()}, name="auc")
    return Comparison(index, tradeoffs, iv, segments, auc, tuple(excluded))
