"""The history a scheduled batch keeps: each measure of each pred across runs."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime

from ..errors import InputError
from ._common import panel_grid, save

__all__ = ["plot_history"]


def _time(text) -> datetime:
    if isinstance(text, datetime):
        return text
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"cannot read the time {text!r} of a results row") from None


def _name(path: str) -> str:
    base = os.path.basename(str(path).rstrip("/"))
    return base[:-5] if base.endswith(".zarr") else base


def plot_history(rows: Sequence[dict], *, measures: Sequence[str] | None = None, path=None):
    """One panel per measure: each (truth, pred, parameters) as a step line over time.

    Each results row holds the value of one (truth, pred, measure,
    parameters) from the time it was scored (``scored_at``) until the inputs
    changed (the next row of the same key) — or, for the last one, until the
    last run that saw them (``seen_at``).  The figure draws exactly that:
    a point where a value was scored, a flat line while it held, a jump where
    a store changed.

    Parameters
    ----------
    rows : sequence of dict
        Score rows as :meth:`daskbicl.batch.results.ResultsDB.scores` returns them
        (columns ``truth``, ``pred``, ``measure``, ``params``, ``value``,
        ``scored_at``, ``seen_at``).
    measures : sequence of str, optional
        Panels, in this order; default: every measure in ``rows``.
    path : str or path, optional
        Also write the figure there (PNG, SVG or PDF by suffix).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> rows = [dict(truth="t.zarr", pred="a.zarr", measure="cari", params="{}", value=v,
    ...              scored_at=f"2026-11-0{d}T02:30:00", seen_at=f"2026-11-0{d + 1}T02:30:00")
    ...         for d, v in ((1, 0.5), (3, 0.7))]
    >>> fig = plot_history(rows)
    >>> [ax.get_title() for ax in fig.axes]
    ['cari']
    """
    import matplotlib.dates as mdates

    rows = [r for r in rows if r.get("value") is not None]
    if not rows:
        raise InputError("no results rows to plot (check the file and the --truth/--pred/--measure filters)")
    present = list(dict.fromkeys(r["measure"] for r in rows))
    measures = list(measures) if measures else present
    missing = [m for m in measures if m not in present]
    if missing:
        raise InputError(f"no rows for measure(s) {', '.join(missing)}; the file has {', '.join(present)}")
    several_truths = len({r["truth"] for r in rows}) > 1
    fig, axes = panel_grid(len(measures), width=6.4, height=4.2)
    for ax, measure in zip(axes, measures):
        series: dict[tuple, list[dict]] = {}
        for r in rows:
            if r["measure"] == measure:
                series.setdefault((r["truth"], r["pred"], r["params"]), []).append(r)
        params_vary = len({k[2] for k in series}) > 1
        for k, ((truth, pred, params), items) in enumerate(sorted(series.items())):
            items.sort(key=lambda r: _time(r["scored_at"]))
            xs = [_time(r["scored_at"]) for r in items]
            ys = [float(r["value"]) for r in items]
            end = max([_time(r.get("seen_at") or r["scored_at"]) for r in items] + [xs[-1]])
            label = _name(pred) + (f" vs {_name(truth)}" if several_truths else "") + (f" {params}" if params_vary else "")
            color = f"C{k % 10}"
            ax.step(xs + [end], ys + [ys[-1]], where="post", color=color, lw=1.4, label=label)
            ax.plot(xs, ys, "o", color=color, ms=4)
        ax.set_title(measure)
        ax.set_xlabel("scored at")
        ax.set_ylabel("value")
        ax.grid(alpha=0.3)
        locator = mdates.AutoDateLocator()
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
        handles, labels = ax.get_legend_handles_labels()
        if handles:
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=min(3, len(handles)), fontsize=8,
                      frameon=False)
    if path is not None:
        save(fig, path)
    return fig
