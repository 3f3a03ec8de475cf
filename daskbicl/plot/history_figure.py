"""The history a scheduled batch keeps: each measure of each pred across the nights (batch runs)."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from datetime import datetime

from ..errors import InputError
from ._common import save

__all__ = ["plot_history", "short_label", "line_colors"]


def _time(text) -> datetime | None:
    if text is None or isinstance(text, datetime):
        return text
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"cannot read the time {text!r} of a results row") from None


def _name(text: str) -> str:
    """A store's name without its ``.zarr`` suffix (``runs/pred-1.zarr`` -> ``runs/pred-1``)."""
    text = str(text).rstrip("/")
    return text[:-5] if text.endswith(".zarr") else text


def short_label(measure: str, params) -> str:
    """A measure and its parameters as one short label (:func:`daskbicl.batch.names.label`).

    >>> short_label("nce", '{"normalizer":"corrected"}')
    'nce'
    >>> short_label("v_measure_rows", '{"beta":0.5}')
    'v_measure_rows[beta=0.5]'
    """
    from ..batch.names import label

    return label(measure, params if isinstance(params, str) else "{}")


def line_colors(n: int) -> list:
    """``n`` colours, all distinct: tab10 up to 10, tab20 up to 20, else evenly spaced over ``turbo``."""
    import numpy as np
    from matplotlib import colormaps

    if n <= 10:
        return [colormaps["tab10"](k) for k in range(n)]
    if n <= 20:
        return [colormaps["tab20"](k) for k in range(n)]
    return [colormaps["turbo"](x) for x in np.linspace(0.04, 0.96, n)]


#: Size of one panel (inches), the most panels side by side, the legend's and titles' font sizes (points).
_PANEL_W, _PANEL_H, _COLUMNS, _FONT, _TITLE = 4.2, 2.8, 3, 8, 10
#: Markers cycled with the colours beyond ten lines, so neighbouring colours still differ in shape.
_MARKERS = "osD^v<>ph*"


def _nights(rows: list[dict]) -> list[tuple[str, datetime | None]]:
    """The runs of ``rows`` in time order: ``[(run_id, started_at)]``."""
    seen: dict[str, datetime | None] = {}
    for r in rows:
        seen.setdefault(r["run_id"], _time(r.get("started_at")))
    return sorted(seen.items(), key=lambda item: (item[1] is None, item[1] or datetime.min, item[0]))


def plot_history(rows: Sequence[dict], *, measures: Sequence[str] | None = None, path=None):
    """Small multiples: one panel per measure label, each (truth, pred) a line over the nights.

    ``rows`` are what each batch run saw (:meth:`ResultsDB.observations
    <daskbicl.batch.results.ResultsDB.observations>`): the x axis is the
    runs in order (night 1, 2, ...; the date under each), with a point for
    every night a pair was seen with a value -- scored or reused -- so a
    night that only reused values has its point too; a night a pair was not
    seen leaves a gap.  A panel is one measure and parameter set, titled by
    its short label (``nce``, ``fmeasure@pred``; wrapped to the panel's
    width).  Every line has its own colour (and, beyond ten lines, a marker
    of its own), the same in every panel, and one entry in the figure's
    single legend, below the panels in as many columns as fit the width; the
    figure grows to hold it, so no entry is ever cut off.

    Parameters
    ----------
    rows : sequence of dict
        With ``run_id``, ``started_at``, ``truth_name`` (or ``truth``),
        ``pred_name`` (or ``pred``), ``measure``, ``params``, ``value`` and
        ``status`` (only ``scored`` and ``reused`` are drawn).
    measures : sequence of str, optional
        Measures (names or labels) to draw, in this order; default: all.
    path : str or path, optional
        Also write the figure there (PNG, SVG or PDF by suffix).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> rows = [dict(run_id=f"r{d}", started_at=f"2026-11-0{d}T02:30:00+00:00", truth_name="sim/t.zarr",
    ...              pred_name="runs/a.zarr", measure="cari", params="{}", value=v, status="scored")
    ...         for d, v in ((1, 0.5), (2, 0.5), (3, 0.7))]
    >>> fig = plot_history(rows)
    >>> [ax.get_title() for ax in fig.axes], len(fig.axes[0].get_lines()[0].get_xdata())
    (['cari'], 3)
    """
    rows = [{**r, "label": short_label(r["measure"], r["params"]),
             "t": _name(r.get("truth_name") or r["truth"]), "p": _name(r.get("pred_name") or r["pred"])}
            for r in rows if r.get("value") is not None and r.get("status", "scored") in ("scored", "reused")]
    if not rows:
        raise InputError("no results rows to plot (check the file and the --truth/--pred/--measure filters)")
    present = list(dict.fromkeys(r["label"] for r in rows))
    if measures:
        from ..batch.names import label_matches

        wanted = list(dict.fromkeys(measures))
        chosen = {m: [r for r in rows if label_matches(r["measure"], r["params"], (m,))] for m in wanted}
        missing = [m for m in wanted if not chosen[m]]
        if missing:
            raise InputError(f"no rows for measure(s) {', '.join(missing)}; the file has {', '.join(present)}")
        panels = list(dict.fromkeys(r["label"] for m in wanted for r in chosen[m]))
        rows = [r for r in rows if r["label"] in panels]
    else:
        panels = present
    nights = _nights(rows)
    index = {run: k for k, (run, _) in enumerate(nights)}
    truths = list(dict.fromkeys(r["t"] for r in rows))
    lines = sorted(dict.fromkeys((r["t"], r["p"]) for r in rows))
    own = all(sum(1 for _, p in lines if p == pred) == 1 for _, pred in lines)  # each pred: one truth
    names = {line: line[1] if len(truths) == 1 or own else f"{line[1]} vs {line[0]}" for line in lines}
    colors = dict(zip(lines, line_colors(len(lines))))
    markers = {line: _MARKERS[k // 10 % len(_MARKERS)] if len(lines) > 10 else "o" for k, line in enumerate(lines)}
    fig, axes, legend_rows, ncol = _figure(len(panels), [names[line] for line in lines])
    for ax, panel in zip(axes, panels):
        values: dict[tuple, dict[int, float]] = {}
        for r in rows:
            if r["label"] == panel:
                values.setdefault((r["t"], r["p"]), {})[index[r["run_id"]]] = float(r["value"])
        for line in lines:
            if line in values:
                xs = list(range(len(nights)))
                ys = [values[line].get(k, math.nan) for k in xs]
                ax.plot([x + 1 for x in xs], ys, marker=markers[line], ms=3.5, lw=1.3, color=colors[line],
                        label=names[line])
        ax.set_title(_wrap(panel, _PANEL_W, _TITLE), fontsize=_TITLE)
        _night_axis(ax, nights)
    for ax in axes[-min(len(axes), _COLUMNS):]:
        ax.set_xlabel("night (batch run)", fontsize=_FONT + 1)
    handles = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    order = [names[line] for line in lines if names[line] in handles]
    fig.legend([handles[n] for n in order], order, loc="outside lower center", ncol=ncol, fontsize=_FONT,
               frameon=False)
    title = (f"scores against the truth {truths[0]!r}" if len(truths) == 1
             else f"scores of {len(lines)} pairs against {len(truths)} truths")
    fig.suptitle(_wrap(title, fig.get_size_inches()[0], _TITLE + 1), fontsize=_TITLE + 1)
    if path is not None:
        save(fig, path)
    return fig


def _wrap(text: str, inches: float, size: float) -> str:
    """``text`` wrapped to lines that fit ``inches`` at font ``size`` (0.6 em a character, a margin kept)."""
    width = max(8, int(inches * 72 * 0.9 / (0.6 * size)))
    return "\n".join(textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False)) or text


def _figure(n: int, labels: list[str]):
    """``(fig, axes, legend rows, legend columns)``: ``n`` panels of a fixed size in rows of at most
    :data:`_COLUMNS`, the figure taller by the legend's rows so that it always fits."""
    from matplotlib.figure import Figure

    ncols = min(n, _COLUMNS)
    nrows = -(-n // ncols)
    width = max(_PANEL_W * ncols, 6.0)
    entry = 0.62 * _FONT * max(len(s) for s in labels) + 3.5 * _FONT  # text + key + gap, in points
    ncol = max(1, min(len(labels), int(0.92 * width * 72 // entry)))
    legend_rows = -(-len(labels) // ncol)
    longest = max(len(s) for s in labels)
    if 0.62 * _FONT * longest + 3.5 * _FONT > 0.92 * width * 72:  # one label wider than the figure: widen it
        width = (0.62 * _FONT * longest + 3.5 * _FONT) / (0.92 * 72)
    height = _PANEL_H * nrows + 0.9 + legend_rows * _FONT * 1.45 / 72 + 0.3
    fig = Figure(figsize=(width, height), layout="constrained")
    grid = fig.subplots(nrows, ncols, squeeze=False, sharex=True).ravel()
    for extra in grid[n:]:
        fig.delaxes(extra)
    for ax in grid[:n]:
        ax.xaxis.set_tick_params(labelbottom=True)  # every panel names its nights
    return fig, list(grid[:n]), legend_rows, ncol


def _night_axis(ax, nights: list) -> None:
    """Nights 1..N on the x axis, each tick with its date (at most eight ticks)."""
    step = max(1, -(-len(nights) // 8))
    ticks = list(range(1, len(nights) + 1, step))
    ax.set_xticks(ticks)
    ax.set_xticklabels([f"{k}\n{nights[k - 1][1]:%m-%d}" if nights[k - 1][1] else str(k) for k in ticks])
    ax.set_xlim(0.6, len(nights) + 0.4)
    ax.tick_params(labelsize=_FONT - 1)
    ax.grid(alpha=0.3)
