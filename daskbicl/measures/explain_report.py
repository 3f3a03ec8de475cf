"""Reports of a :func:`daskbicl.explain` Dataset: per-cluster tables, Markdown, JSON and CSV.

What ``daskbicl explain`` prints: the scores, the matching table, the
worst-recovered truth clusters, the split and merged ones (co-clusterings),
the missed and spurious biclusters (biclusterings).
"""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pandas as pd
import xarray as xr

from ..io.validate import PARTITION
from .explain import AXES

__all__ = ["cluster_tables", "to_csv", "to_json", "to_markdown"]

#: How the report names each axis.
_AXIS_NAMES = {"row": "Rows", "col": "Columns"}


def _label(value) -> str:
    return "—" if value is None else str(value)


def cluster_tables(ds: xr.Dataset) -> dict[str, pd.DataFrame]:
    """The explanation as one table per side: truth clusters and pred clusters of each axis, or of the biclusters.

    Keys ``row_truth``, ``row_pred``, ``col_truth``, ``col_pred`` (co-clusterings)
    or ``truth_bicluster``, ``pred_bicluster`` (biclusterings); one row per cluster.
    """
    if ds.attrs.get("kind") == PARTITION:
        out = {}
        for a in AXES:
            out[f"{a}_truth"] = pd.DataFrame({
                "truth": ds[f"{a}_truth"].values, "size": ds[f"{a}_truth_size"].values,
                "match": ds[f"{a}_match"].values, "shared": ds[f"{a}_shared"].values,
                "recall": ds[f"{a}_recall"].values, "precision": ds[f"{a}_precision"].values,
                "misplaced": ds[f"{a}_misplaced"].values, "split_into": ds[f"{a}_split_into"].values,
            })
            out[f"{a}_pred"] = pd.DataFrame({
                "pred": ds[f"{a}_pred"].values, "size": ds[f"{a}_pred_size"].values,
                "match": ds[f"{a}_pred_match"].values, "merges": ds[f"{a}_merges"].values,
            })
        return out
    return {
        "truth_bicluster": pd.DataFrame({
            "truth": ds.truth_bicluster.values, "cells": ds.truth_cells.values, "best_pred": ds.truth_best.values,
            "jaccard": ds.truth_best_jaccard.values, "recovered": ds.recovered.values,
        }),
        "pred_bicluster": pd.DataFrame({
            "pred": ds.pred_bicluster.values, "cells": ds.pred_cells.values, "best_truth": ds.pred_best.values,
            "jaccard": ds.pred_best_jaccard.values, "spurious": ds.spurious.values,
        }),
    }


def _cell(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (float, np.floating)):
        return "—" if math.isnan(value) else f"{value:.4f}"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    return _label(value).replace("|", "\\|")


#: Columns that hold the users' labels: printed as they are (no thousands separators).
_LABEL_COLUMNS = frozenset({"truth", "pred", "match", "best_pred", "best_truth"})


def _table(frame: pd.DataFrame, limit: int) -> list[str]:
    shown = frame.head(limit)
    labels = [c in _LABEL_COLUMNS for c in frame.columns]
    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(_label(v).replace("|", "\\|") if is_label else _cell(v)
                                for v, is_label in zip(row, labels)) + " |"
              for row in shown.itertuples(index=False)]
    if len(frame) > limit:
        lines.append(f"\n({len(frame) - limit:,} more not shown)")
    return lines


def _scores(ds: xr.Dataset) -> list[str]:
    lines = ["## Scores", "", "| measure | value |", "|---|---|"]
    for name, value in zip(ds.measure.values.tolist(), ds.score.values.tolist()):
        lines.append(f"| {name} | {_cell(float(value))} |")
    return lines


def _parts(ds: xr.Dataset, a: str, truth: int, taken: np.ndarray) -> str:
    preds = np.flatnonzero(taken[truth])
    counts = ds[f"{a}_count"].values[truth]
    return ", ".join(f"{_label(ds[f'{a}_pred'].values[k])} ({int(counts[k]):,})" for k in preds)


def _axis_report(ds: xr.Dataset, a: str, worst: int) -> list[str]:
    tables = cluster_tables(ds)
    truth, pred = tables[f"{a}_truth"], tables[f"{a}_pred"]
    items = int(ds[f"{a}_items"])
    misplaced = float(ds[f"{a}_misplaced"].sum())
    lines = ["", f"## {_AXIS_NAMES[a]}: {items:,} items, {len(truth):,} truth and {len(pred):,} pred clusters", "",
             f"Coverage: {int(ds[f'{a}_unassigned_truth']):,} items unassigned in truth, "
             f"{int(ds[f'{a}_unassigned_pred']):,} in pred (policy: {ds.attrs.get('unassigned', 'error')}).  "
             f"Matched one-to-one: {1 - misplaced:.4f} of the items; misplaced: {misplaced:.4f} (the axis's CE "
             f"distance, summed over the truth clusters below).", "",
             f"### Worst-recovered truth clusters (lowest recall of their match; {worst} at most)", ""]
    lines += _table(truth.sort_values(["recall", "size"], ascending=[True, False], kind="stable"), worst)
    takes = ds[f"{a}_takes"].values
    split = np.flatnonzero(ds[f"{a}_split_into"].values >= 2)
    share = ds.attrs.get("share")
    lines += ["", f"### Split truth clusters ({len(split):,}: two or more pred clusters each take more than "
              f"{share} of it)", ""]
    order = split[np.argsort(-ds[f"{a}_truth_size"].values[split], kind="stable")]
    lines += [f"* truth {_label(ds[f'{a}_truth'].values[h])} (size {int(ds[f'{a}_truth_size'].values[h]):,}) → "
              f"{_parts(ds, a, h, takes)}" for h in order[:worst]] or ["None."]
    merged = np.flatnonzero(ds[f"{a}_merges"].values >= 2)
    lines += ["", f"### Merging pred clusters ({len(merged):,}: each takes more than {share} of two or more truth "
              "clusters)", ""]
    if not len(merged):
        lines.append("None.")
    for k in merged[np.argsort(-ds[f"{a}_pred_size"].values[merged], kind="stable")][:worst]:
        col = ds[f"{a}_count"].values[:, k]
        parts = ", ".join(f"{_label(ds[f'{a}_truth'].values[h])} ({int(col[h]):,})" for h in np.flatnonzero(takes[:, k]))
        lines.append(f"* pred {_label(ds[f'{a}_pred'].values[k])} (size {int(ds[f'{a}_pred_size'].values[k]):,}) ← "
                     f"{parts}")
    unmatched = pred[pd.isna(pred["match"])]
    if len(unmatched):
        lines += ["", f"### Pred clusters left out of the matching ({len(unmatched):,})", ""]
        lines += _table(unmatched.sort_values("size", ascending=False, kind="stable"), worst)
    return lines


def _bicluster_report(ds: xr.Dataset, worst: int) -> list[str]:
    tables = cluster_tables(ds)
    truth, pred = tables["truth_bicluster"], tables["pred_bicluster"]
    threshold = ds.attrs.get("threshold")
    lines = ["", f"## Biclusters: {len(truth):,} truth, {len(pred):,} pred in a {ds.attrs['n_rows']:,} x "
             f"{ds.attrs['n_cols']:,} matrix", "",
             f"Recovered (best cell Jaccard ≥ {threshold}): {int(truth['recovered'].sum()):,} of {len(truth):,} "
             f"truth biclusters; missed: {int((~truth['recovered']).sum()):,}; spurious pred biclusters: "
             f"{int(pred['spurious'].sum()):,} of {len(pred):,}.", "",
             f"### Matching table, worst-recovered first ({worst} at most)", ""]
    lines += _table(truth.sort_values(["jaccard", "cells"], ascending=[True, False], kind="stable"), worst)
    spurious = pred[pred["spurious"]].sort_values(["cells"], ascending=False, kind="stable")
    lines += ["", f"### Spurious pred biclusters ({len(spurious):,})", ""]
    lines += _table(spurious, worst) if len(spurious) else ["None."]
    return lines


def to_markdown(ds: xr.Dataset, *, title: str = "daskbicl explain", worst: int = 10) -> str:
    """The report a person reads: scores, the matching, the worst-recovered, split, merged and spurious clusters."""
    lines = [f"# {title}", ""] + _scores(ds)
    if ds.attrs.get("kind") == PARTITION:
        for a in AXES:
            lines += _axis_report(ds, a, worst)
    else:
        lines += _bicluster_report(ds, worst)
    return "\n".join(lines) + "\n"


def _jsonable(value):
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) else float(value)
    return value


def to_json(ds: xr.Dataset) -> str:
    """One JSON object: ``scores``, the per-cluster ``tables`` (lists of records) and the options (``attrs``)."""
    out = {
        "scores": {k: _jsonable(v) for k, v in zip(ds.measure.values.tolist(), ds.score.values.tolist())},
        "attrs": {k: _jsonable(v) for k, v in ds.attrs.items()},
        "tables": {name: [{k: _jsonable(v) for k, v in rec.items()} for rec in frame.to_dict("records")]
                   for name, frame in cluster_tables(ds).items()},
    }
    return json.dumps(out, default=str)


def to_csv(ds: xr.Dataset) -> str:
    """The per-cluster tables in one CSV, a ``table`` column saying which (``row_truth``, ...)."""
    frames = [frame.astype(object).assign(table=name)[["table", *frame.columns]]  # object: no int -> float upcast
              for name, frame in cluster_tables(ds).items()]
    buffer = io.StringIO()
    pd.concat(frames, ignore_index=True).to_csv(buffer, index=False)
    return buffer.getvalue()
