"""Match truth and pred rows and columns (docs/guide/data-model.md).

When both inputs carry a ``row`` (``col``) coordinate, rows are matched by
label: the same gene in another position is the same row, and pred is
reordered to truth's order.  Otherwise rows are matched by position.
Coordinates that do not match exactly are an error naming how many labels are
missing on each side; there is never a silent inner join.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import xarray as xr

from ..errors import AlignmentError

__all__ = ["align", "check_unique"]


def _examples(values, k: int = 3) -> str:
    shown = ", ".join(repr(v) for v in list(values[:k]))
    return f" (e.g. {shown})" if shown else ""


def check_unique(index: pd.Index, role: str, dim: str) -> None:
    """Coordinate labels must be unique to match rows/columns by label."""
    if not index.is_unique:
        dup = index[index.duplicated()].unique()
        raise AlignmentError(
            f"{role} has {len(dup):,} duplicated '{dim}' coordinate labels{_examples(dup)}; "
            "each row/column label must be unique"
        )


def _align_dim(truth: xr.Dataset, pred: xr.Dataset, dim: str) -> xr.Dataset:
    n_t, n_p = truth.sizes[dim], pred.sizes[dim]
    for role, n in (("truth", n_t), ("pred", n_p)):
        if math.isnan(n):
            raise AlignmentError(
                f"{role} has an unknown number of {dim}s (a dask array with unknown chunk "
                "sizes); call .compute_chunk_sizes() on it first"
            )
    t_has, p_has = dim in truth.indexes, dim in pred.indexes
    if not (t_has and p_has):
        if n_t != n_p:
            raise AlignmentError(
                f"truth has {n_t:,} {dim}s but pred has {n_p:,}; both must describe the same "
                f"matrix (add '{dim}' coordinates to both to match by label)"
            )
        return pred
    t_idx: pd.Index = truth.indexes[dim]
    p_idx: pd.Index = pred.indexes[dim]
    if pd.api.types.is_bool_dtype(t_idx.dtype) != pd.api.types.is_bool_dtype(p_idx.dtype):
        # pandas matches True with 1 and False with 0: booleans match booleans only
        raise AlignmentError(
            f"'{dim}' coordinates of truth are {t_idx.dtype} and of pred {p_idx.dtype}: booleans match "
            "only booleans (True is not the label 1); give both the same kind of coordinate labels"
        )
    check_unique(t_idx, "truth", dim)
    check_unique(p_idx, "pred", dim)
    if t_idx.equals(p_idx):
        return pred
    missing_in_pred = t_idx.difference(p_idx, sort=False)
    missing_in_truth = p_idx.difference(t_idx, sort=False)
    if len(missing_in_pred) or len(missing_in_truth):
        raise AlignmentError(
            f"'{dim}' coordinates do not match: {len(missing_in_pred):,} of truth's {n_t:,} "
            f"{dim}s are missing from pred{_examples(missing_in_pred)}, and "
            f"{len(missing_in_truth):,} of pred's {n_p:,} {dim}s are missing from truth"
            f"{_examples(missing_in_truth)}"
        )
    order = p_idx.get_indexer(t_idx)
    return pred.isel({dim: np.asarray(order)})


def align(truth: xr.Dataset, pred: xr.Dataset) -> tuple[xr.Dataset, xr.Dataset]:
    """Return ``(truth, pred)`` with pred's rows and columns in truth's order.

    Raises
    ------
    AlignmentError
        When lengths differ (matching by position) or coordinate labels differ
        (matching by label), naming how many are missing on each side.
    """
    for dim in ("row", "col"):
        pred = _align_dim(truth, pred, dim)
    return truth, pred
