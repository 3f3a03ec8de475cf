"""The history a scheduled batch keeps: each measure of each pred across runs."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from datetime import datetime

from ..errors import InputError
from ._common import save

__all__ = ["plot_history", "short_label"]


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


#: Short names of parameters in panel titles.
_GREEK = {"alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "lambda": "λ", "theta": "θ"}


def short_label(params) -> str:
    """A parameter set as a short label: ``{"beta":0.5,"clip":false}`` -> ``β=0.5, clip=false``.

    >>> short_label('{"beta":0.5,"normalizer":"corrected"}')
    'β=0.5, normalizer=corrected'
    >>> short_label("{}")
    ''
    """
    if isinstance(params, str):
        try:
            params = json.loads(params) if params else {}
        except ValueError:
            return params
    if not isinstance(params, dict):
        return str(params)
    out = []
    for k, v in params.items():
        if isinstance(v, bool):
            v = "true" if v else "false"
        elif isinstance(v, (int, float)):
            v = f"{v:g}"
        out.append(f"{_GREEK.get(k, k)}={v}")
    return ", ".join(out)


#: Size of one panel (inches) and the most panels side by side.
_PANEL_W, _PANEL_H, _COLUMNS = 4.0, 2.6, 3


def plot_history(rows: Sequence[dict], *, measures: Sequence[str] | None = None, path=None):
    """Small multiples: one panel per measure and parameter set, each pred a step line over time.

    Each results row holds the value of one (truth, pred, measure,
    parameters) from the time it was scored (``scored_at``) until the inputs
    changed (the next row of the same key) — or, for the last one, until the
    last run that saw them (``seen_at``).  The figure draws exactly that:
    a point where a value was scored, a flat line while it held, a jump where
    a store changed.  Panels keep their size whatever their number (rows of
    at most three); a pred has one colour in every panel and one entry in the
    figure's single legend; parameters are short (``β=0.5``); the title names
    the truth (with several truths, each line says which).

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
    rows = [r for r in rows if r.get("value") is not None]
    if not rows:
        raise InputError("no results rows to plot (check the file and the --truth/--pred/--measure filters)")
    present = list(dict.fromkeys(r["measure"] for r in rows))
    measures = list(measures) if measures else present
    missing = [m for m in measures if m not in present]
    if missing:
        raise InputError(f"no rows for measure(s) {', '.join(missing)}; the file has {', '.join(present)}")
    panels = [(m, p) for m in measures for p in dict.fromkeys(r["params"] for r in rows if r["measure"] == m)]
    truths = list(dict.fromkeys(_name(r["truth"]) for r in rows))
    lines = list(dict.fromkeys((_name(r["pred"]), _name(r["truth"])) for r in rows))
    colors = {line: f"C{k % 10}" for k, line in enumerate(lines)}
    fig = _figure(len(panels))
    axes = fig.axes
    for ax, (measure, params) in zip(axes, panels):
        series: dict[tuple, list[dict]] = {}
        for r in rows:
            if r["measure"] == measure and r["params"] == params:
                series.setdefault((_name(r["pred"]), _name(r["truth"])), []).append(r)
        for line, items in sorted(series.items()):
            _step(ax, items, colors[line], label=line[0] if len(truths) == 1 else f"{line[0]} vs {line[1]}")
        label = short_label(params)
        ax.set_title(measure + (f" ({label})" if label else ""), fontsize=10)
        _date_axis(ax)
    for ax in axes[-min(len(axes), _COLUMNS):]:
        ax.set_xlabel("scored at (UTC)")
    handles, labels = {}, {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
            labels.setdefault(lab, lab)
    fig.legend(list(handles.values()), list(labels), loc="outside lower center",
               ncol=min(len(handles), 6), fontsize=8, frameon=False)
    fig.suptitle(f"scores against the truth {truths[0]!r}" if len(truths) == 1 else f"scores against {len(truths)} truths",
                 fontsize=11)
    if path is not None:
        save(fig, path)
    return fig


def _figure(n: int):
    """A figure of ``n`` panels of a fixed size, rows of at most :data:`_COLUMNS`."""
    from matplotlib.figure import Figure

    ncols = min(n, _COLUMNS)
    nrows = -(-n // ncols)
    fig = Figure(figsize=(_PANEL_W * ncols, _PANEL_H * nrows + 1.0), layout="constrained")
    grid = fig.subplots(nrows, ncols, squeeze=False, sharex=True).ravel()
    for extra in grid[n:]:
        fig.delaxes(extra)
    return fig


def _step(ax, items: list[dict], color: str, label: str) -> None:
    items = sorted(items, key=lambda r: _time(r["scored_at"]))
    xs = [_time(r["scored_at"]) for r in items]
    ys = [float(r["value"]) for r in items]
    end = max([_time(r.get("seen_at") or r["scored_at"]) for r in items] + [xs[-1]])
    ax.step(xs + [end], ys + [ys[-1]], where="post", color=color, lw=1.4, label=label)
    ax.plot(xs, ys, "o", color=color, ms=3.5)


def _date_axis(ax) -> None:
    import matplotlib.dates as mdates

    locator = mdates.AutoDateLocator(maxticks=6)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    ax.tick_params(labelsize=8)
    ax.grid(alpha=0.3)
