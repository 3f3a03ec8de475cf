"""Results as users have them: fitted estimators, index lists, mask pairs, files.

Everything here turns a user's object into the Dataset of the data model (docs/guide/data-model.md) that
:func:`daskbicl.io.validate.as_dataset` validates:

* :func:`from_estimator` -- a fitted scikit-learn style model: ``row_labels_``
  and ``column_labels_`` give a co-clustering, otherwise ``rows_`` and
  ``columns_`` a biclustering (any object with those attributes works);
* :func:`biclustering_from_indices` -- a list of ``(rows, cols)`` index (or
  coordinate-label) lists;
* :func:`as_input` -- what every scoring entry point calls: estimators and
  ``(row_mask, col_mask)`` tuples of 2-D boolean arrays are converted, the
  rest goes to :func:`~daskbicl.io.validate.as_dataset`;
* :func:`read_labels`, :func:`read_mask`, :func:`read_biclusters_json` -- the
  files ``daskbicl convert`` reads (``.npy``, ``.txt``, ``.csv``, ``.tsv``,
  ``.parquet``, JSON).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence

import numpy as np
import pandas as pd
import xarray as xr

from ..errors import InputError
from .store import open_store
from .validate import BICLUSTERING, KINDS, PARTITION, as_dataset

__all__ = [
    "TwoViewsWarning", "as_input", "biclustering_dataset", "biclustering_from_indices", "coordinate_labels",
    "from_estimator",
    "is_estimator", "opened",
    "partition_dataset", "read_biclusters_json", "read_labels", "read_mask",
]


# --------------------------------------------------------------------------- building Datasets


def coordinate_labels(values, dim: str, size: int, role: str) -> np.ndarray:
    """Coordinate labels of ``dim`` checked: a 1-D sequence (not a string, set or dict) of ``size`` labels."""
    if isinstance(values, (str, bytes, set, frozenset, dict)) or not hasattr(values, "__len__"):
        raise InputError(f"{role}: {dim} coordinates must be a sequence of labels (a list or 1-D array), "
                         f"got {type(values).__name__}")
    arr = values if hasattr(values, "dtype") and hasattr(values, "ndim") else np.asarray(list(values))
    if arr.ndim != 1:
        raise InputError(f"{role}: {dim} coordinates must be 1-D, got shape {tuple(arr.shape)}")
    if len(arr) != size:
        raise InputError(f"{role}: {dim} coordinates have {len(arr):,} labels for {size:,} {dim}s")
    return arr


def _coords(ds_sizes: dict, given: dict, role: str) -> dict:
    coords = {}
    for dim, values in given.items():
        if values is None:
            continue
        arr = np.asarray(coordinate_labels(values, dim, ds_sizes[dim], role))
        index = pd.Index(arr)
        if index.has_duplicates:
            dup = index[index.duplicated()].unique()[:3].tolist()
            raise InputError(f"{role}: {dim} coordinates repeat labels, e.g. {dup}")
        coords[dim] = arr
    return coords


def partition_dataset(row_labels, col_labels, *, row=None, col=None, role: str = "input") -> xr.Dataset:
    """A co-clustering Dataset from two label arrays (not yet validated)."""
    rl, cl = (np.asarray(x) if not hasattr(x, "dtype") else x for x in (row_labels, col_labels))
    for name, a in (("row_labels", rl), ("col_labels", cl)):
        if getattr(a, "ndim", None) != 1:
            raise InputError(f"{role}: {name} must be 1-D, got shape {tuple(np.shape(a))}")
    ds = xr.Dataset({"row_labels": ("row", rl), "col_labels": ("col", cl)}, attrs={"daskbicl_kind": PARTITION})
    return ds.assign_coords(_coords(dict(ds.sizes), {"row": row, "col": col}, role))


def _mask(values, name: str, role: str):
    if not hasattr(values, "dtype"):
        values = np.asarray(values)
    if getattr(values, "ndim", None) != 2:
        raise InputError(f"{role}: {name} must be 2-D (bicluster, {name[:3]}), got shape {tuple(np.shape(values))}")
    if values.dtype.kind in "iu" and isinstance(values, np.ndarray):
        if values.size and not np.isin(values, (0, 1)).all():
            raise InputError(f"{role}: {name} must be boolean (or 0/1), got other integer values")
        values = values.astype(bool)
    return values


def biclustering_dataset(row_mask, col_mask, *, bicluster=None, row=None, col=None,
                         role: str = "input") -> xr.Dataset:
    """A biclustering Dataset from ``(K, I)`` and ``(K, J)`` boolean masks (not yet validated)."""
    rm, cm = _mask(row_mask, "row_mask", role), _mask(col_mask, "col_mask", role)
    if rm.shape[0] != cm.shape[0]:
        raise InputError(f"{role}: row_mask has {rm.shape[0]} biclusters but col_mask has {cm.shape[0]}")
    ds = xr.Dataset(
        {"row_mask": (("bicluster", "row"), rm), "col_mask": (("bicluster", "col"), cm)},
        attrs={"daskbicl_kind": BICLUSTERING},
    )
    return ds.assign_coords(_coords(dict(ds.sizes), {"bicluster": bicluster, "row": row, "col": col}, role))


# --------------------------------------------------------------------------- estimators


def is_estimator(obj) -> bool:
    """True for an object carrying fitted co-clustering or biclustering attributes."""
    if isinstance(obj, (xr.Dataset, xr.DataArray, np.ndarray, tuple, list, str, bytes, os.PathLike)):
        return False
    has = lambda a: getattr(obj, a, None) is not None  # noqa: E731
    return (has("row_labels_") and has("column_labels_")) or (has("rows_") and has("columns_"))


def from_estimator(model, *, kind: str = "auto", row=None, col=None, role: str = "input") -> xr.Dataset:
    """The Dataset of a fitted co-clustering or biclustering model.

    ``row_labels_`` and ``column_labels_`` (scikit-learn's
    ``SpectralCoclustering``, ``SpectralBiclustering``, coclust's models)
    give a co-clustering; otherwise ``rows_`` and ``columns_`` (boolean
    ``(K, I)`` and ``(K, J)`` arrays, scikit-learn's ``BiclusterMixin``)
    give a biclustering.  Any object with those attributes works.

    Parameters
    ----------
    model : object
        A fitted model.
    kind : {"auto", "partition", "biclustering"}, default "auto"
        Which view of the model to read.  ``"auto"`` reads the labels when
        the model has them, else the masks.  ``"biclustering"`` reads
        ``rows_`` and ``columns_`` even when labels exist: scikit-learn's
        ``SpectralCoclustering`` pairs row cluster *k* with column cluster
        *k* there (K biclusters, what its ``consensus_score`` compares),
        while its labels read as a co-clustering give all K x K blocks.
        ``"partition"`` requires the labels.  When ``"auto"`` meets a model
        with both views and they differ, a :class:`TwoViewsWarning` (one
        line) says which view was read and how to get the other: bicluster
        measures such as ``consensus`` differ between them (on the example
        below 1.0 for ``kind="biclustering"``, 0.33 for the 3 x 3 blocks).
    row, col : array-like, optional
        Coordinate labels (gene ids, sample ids) to match rows and columns
        by label against the other side.

    Examples
    --------
    >>> import numpy as np, daskbicl
    >>> from sklearn.cluster import SpectralCoclustering
    >>> from sklearn.datasets import make_biclusters
    >>> X, rows, cols = make_biclusters((30, 20), 3, noise=0.1, random_state=0)
    >>> model = SpectralCoclustering(n_clusters=3, random_state=0).fit(X)
    >>> daskbicl.from_estimator(model, kind="partition").attrs["daskbicl_kind"]
    'partition'
    >>> truth = daskbicl.biclustering(rows, cols)
    >>> round(daskbicl.score(truth, model, measures=["fmeasure"])["fmeasure"], 3)
    1.0
    >>> pred = daskbicl.from_estimator(model, kind="biclustering")
    >>> pred.sizes["bicluster"], round(daskbicl.consensus(truth, pred), 3)
    (3, 1.0)
    >>> round(daskbicl.consensus(truth, daskbicl.from_estimator(model, kind="partition")), 3)
    0.333
    """
    if kind not in ("auto", "partition", "biclustering"):
        raise InputError(f"{role}: kind must be 'auto', 'partition' or 'biclustering', got {kind!r}")
    has_labels = (getattr(model, "row_labels_", None) is not None
                  and getattr(model, "column_labels_", None) is not None)
    has_masks = getattr(model, "rows_", None) is not None and getattr(model, "columns_", None) is not None
    if has_labels and kind != "biclustering":
        if kind == "auto" and has_masks:
            _note_two_views(model)
        return partition_dataset(np.asarray(model.row_labels_), np.asarray(model.column_labels_),
                                 row=row, col=col, role=role)
    if has_masks and kind != "partition":
        return biclustering_dataset(np.asarray(model.rows_), np.asarray(model.columns_), row=row, col=col, role=role)
    fitted = sorted(a for a in dir(model) if a.endswith("_") and not a.startswith("_"))
    wanted = {"auto": "neither row_labels_ + column_labels_ (a co-clustering) nor rows_ + columns_ (a biclustering)",
              "partition": "no row_labels_ + column_labels_ (kind='partition' reads the labels)",
              "biclustering": "no rows_ + columns_ (kind='biclustering' reads the boolean masks)"}[kind]
    raise InputError(
        f"{role}: {type(model).__name__} has {wanted}; is it fitted? Fitted attributes found: {fitted or 'none'}"
    )


class TwoViewsWarning(UserWarning):
    """A model has both a co-clustering and a biclustering view, and they differ (see :func:`from_estimator`)."""


def _note_two_views(model) -> None:
    """One line when the labels' blocks are not the model's own biclusters (scikit-learn's SpectralCoclustering).

    Read as a co-clustering the labels give every row-cluster x column-cluster block; ``rows_`` /
    ``columns_`` hold the model's own biclusters, which scikit-learn's ``consensus_score`` compares.
    Bicluster measures (``consensus``, MOCICE-BCubed, E4SC) then differ between the two views.
    """
    n_blocks = len(pd.unique(np.asarray(model.row_labels_))) * len(pd.unique(np.asarray(model.column_labels_)))
    n_biclusters = int(np.shape(model.rows_)[0])
    if n_blocks == n_biclusters:
        return
    import warnings

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 2  # point the note at the user's line, outside daskbicl
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep):
        frame, level = frame.f_back, level + 1
    warnings.warn(
        f"{type(model).__name__} read as the co-clustering of its row_labels_/column_labels_ ({n_blocks} blocks); "
        f"its rows_/columns_ hold {n_biclusters} biclusters, the ones scikit-learn's consensus_score compares: "
        "daskbicl.from_estimator(model, kind='biclustering') scores those (kind='partition' keeps the labels "
        "without this note)", TwoViewsWarning, stacklevel=level)


# --------------------------------------------------------------------------- index lists


def _positions(items, index: pd.Index | None, length: int, what: str, k: int) -> np.ndarray:
    if isinstance(items, (str, bytes)) or not hasattr(items, "__iter__"):
        raise InputError(f"bicluster {k}: {what} must be a list of positions or labels, got {items!r}")
    items = list(items)
    if index is not None:
        pos = index.get_indexer(items)
        if (pos < 0).any():
            missing = [items[i] for i in np.flatnonzero(pos < 0)[:3]]
            raise InputError(f"bicluster {k}: {what} {missing} not among the {what} coordinates")
        return pos
    try:
        pos = np.asarray(items, dtype=np.int64) if items else np.zeros(0, dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        raise InputError(
            f"bicluster {k}: {what} must be integer positions (pass {what[:-1]}= coordinates to use labels), "
            f"got {items[:3]}"
        ) from None
    if pos.ndim != 1:
        raise InputError(f"bicluster {k}: {what} must be a flat list of positions")
    bad = (pos < 0) | (pos >= length)
    if bad.any():
        raise InputError(f"bicluster {k}: {what} position {int(pos[bad][0])} is outside 0..{length - 1}")
    return pos


def biclustering_from_indices(biclusters: Sequence, shape: tuple[int, int] | None = None, *,
                              row=None, col=None, bicluster=None) -> xr.Dataset:
    """A biclustering from a list of ``(rows, cols)`` pairs of positions or labels.

    Parameters
    ----------
    biclusters : sequence of (rows, cols)
        Each bicluster's rows and columns: integer positions, or coordinate
        labels when ``row`` / ``col`` are given.  Repeated entries are fine.
        A dict ``{"rows": ..., "cols": ...}`` may stand for a pair.
    shape : (int, int), optional
        ``(I, J)``; may be left out when ``row`` and ``col`` are given.
    row, col : array-like, optional
        Coordinate labels of the matrix's rows and columns.
    bicluster : array-like, optional
        Bicluster labels.

    Notes
    -----
    R's ``biclust`` package stores a result as two logical matrices,
    ``RowxNumber`` (I x K) and ``NumberxCol`` (K x J); their daskbicl form is
    ``daskbicl.biclustering(RowxNumber.T, NumberxCol)`` (transpose the first).
    Python's biclustlib keeps ``Bicluster(rows, cols)`` objects of index
    arrays: ``biclustering_from_indices([(b.rows, b.cols) for b in
    result.biclusters], shape=data.shape)``.

    Examples
    --------
    >>> import daskbicl
    >>> ds = daskbicl.biclustering_from_indices([([0, 1], [2]), ([3], [0, 1])], shape=(4, 3))
    >>> ds.row_mask.values.astype(int).tolist(), ds.col_mask.values.astype(int).tolist()
    ([[1, 1, 0, 0], [0, 0, 0, 1]], [[0, 0, 1], [1, 1, 0]])
    >>> ds = daskbicl.biclustering_from_indices([(["g2"], ["s1"])], row=["g1", "g2"], col=["s1"])
    >>> ds.row_mask.values.tolist()
    [[False, True]]
    """
    if isinstance(biclusters, (str, bytes)) or not isinstance(biclusters, Sequence):
        raise InputError("biclusters must be a list of (rows, cols) pairs")
    row_index = pd.Index(np.asarray(row)) if row is not None else None
    col_index = pd.Index(np.asarray(col)) if col is not None else None
    if shape is None:
        if row_index is None or col_index is None:
            raise InputError("biclustering_from_indices needs shape=(I, J), or both row= and col= coordinates")
        shape = (len(row_index), len(col_index))
    try:
        n_rows, n_cols = (int(s) for s in shape)
    except (TypeError, ValueError):
        raise InputError(f"shape must be (I, J), got {shape!r}") from None
    for name, index, n in (("row", row_index, n_rows), ("col", col_index, n_cols)):
        if index is not None and len(index) != n:
            raise InputError(f"{name} coordinates have {len(index):,} labels but shape says {n:,}")
    rm = np.zeros((len(biclusters), n_rows), dtype=bool)
    cm = np.zeros((len(biclusters), n_cols), dtype=bool)
    for k, item in enumerate(biclusters):
        if isinstance(item, dict):
            if set(item) - {"rows", "cols", "name"} or not {"rows", "cols"} <= set(item):
                raise InputError(f"bicluster {k}: expected keys 'rows' and 'cols', got {sorted(item)}")
            rows, cols = item["rows"], item["cols"]
        elif isinstance(item, (str, bytes)):
            raise InputError(f"bicluster {k}: expected a (rows, cols) pair, got {item!r}")
        else:
            try:
                rows, cols = item
            except (TypeError, ValueError):
                raise InputError(f"bicluster {k}: expected a (rows, cols) pair, got {item!r}") from None
        rm[k, _positions(rows, row_index, n_rows, "rows", k)] = True
        cm[k, _positions(cols, col_index, n_cols, "cols", k)] = True
    return biclustering_dataset(rm, cm, bicluster=bicluster, row=row, col=col)


# --------------------------------------------------------------------------- any input


def _is_mask_pair(obj) -> bool:
    if not isinstance(obj, tuple) or len(obj) != 2:
        return False
    return all(getattr(a, "ndim", None) == 2 and getattr(getattr(a, "dtype", None), "kind", "") == "b" for a in obj)


def opened(obj, role: str, storage_options: dict | None):
    """``obj`` opened as a store with ``storage_options`` when it is a path or URL and options are given,
    else ``obj`` as it is (for :func:`as_input`)."""
    if storage_options and isinstance(obj, (str, os.PathLike)):
        return open_store(obj, role=role, storage_options=storage_options)
    return obj


def as_input(obj, role: str = "input", *, kinds: Sequence[str] = KINDS, allow_empty: bool = False,
             unassigned: str | None = None) -> xr.Dataset:
    """Any input as a validated Dataset: a path or URL of a Zarr store, an estimator, tuples, a Dataset.

    A tuple of two 2-D boolean arrays is ``(row_mask, col_mask)`` (a
    biclustering); a tuple of two 1-D arrays is ``(row_labels, col_labels)``.
    A 2-D array of another dtype in a tuple, or an object that looks like an
    unfitted model, gets a message saying what to do.  ``unassigned`` is the
    policy for unassigned labels (:func:`~daskbicl.io.validate.as_dataset`).
    """
    if isinstance(obj, (str, os.PathLike)):
        obj = open_store(obj, role=role)
    elif is_estimator(obj):
        obj = from_estimator(obj, role=role)
    elif _is_mask_pair(obj):
        obj = biclustering_dataset(*obj, role=role)
    elif isinstance(obj, tuple) and len(obj) == 2 and all(getattr(a, "ndim", 1) == 2 for a in obj):
        raise InputError(
            f"{role}: a tuple of two 2-D arrays is read as (row_mask, col_mask) and must be boolean, "
            f"got dtypes {obj[0].dtype} and {obj[1].dtype}; use daskbicl.biclustering(row_mask, col_mask)"
        )
    elif hasattr(obj, "fit") and not isinstance(obj, (xr.Dataset, tuple, list)):
        raise InputError(
            f"{role}: {type(obj).__name__} looks like a model but has no fitted row_labels_/column_labels_ "
            "or rows_/columns_: fit it first (or pass daskbicl.from_estimator(model))"
        )
    return as_dataset(obj, role, kinds=kinds, allow_empty=allow_empty, unassigned=unassigned)


# --------------------------------------------------------------------------- files


def _split_spec(spec: str) -> tuple[str, str | None]:
    """``FILE`` or ``FILE:COLUMN`` (a Windows drive letter is not a column)."""
    path, sep, column = spec.rpartition(":")
    if sep and path and not (len(path) == 1 and path.isalpha()) and os.path.splitext(path)[1]:
        return path, column
    return spec, None


def _table(path: str, keep_na: bool = False) -> pd.DataFrame:
    """A table; with ``keep_na`` only empty cells are missing ("NA", "N/A", "null"... stay text)."""
    ext = os.path.splitext(path)[1].lower()
    missing = {"keep_default_na": False, "na_values": [""]} if keep_na else {}
    try:
        if ext == ".csv":
            return pd.read_csv(path, **missing)
        if ext == ".tsv":
            return pd.read_csv(path, sep="\t", **missing)
        if ext == ".parquet":
            return pd.read_parquet(path)
    except ImportError as exc:
        raise InputError(f"{path}: reading Parquet needs pyarrow ({exc}); pip install 'daskbicl[parquet]'") from exc
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        raise InputError(f"{path}: cannot read the table: {exc}") from exc
    raise InputError(f"{path}: unknown table format {ext!r} (use .csv, .tsv or .parquet)")


def read_labels(spec: str, *, keep_na: bool = False) -> np.ndarray:
    """One label per row (or column) from ``FILE`` or ``FILE:COLUMN``.

    ``.npy`` (a 1-D array), ``.txt`` (one label per line; integers stay
    integers, anything else is read as text, so a line ``NA`` is the label
    "NA"), ``.csv``/``.tsv``/``.parquet`` with the column named after the
    colon (or the only column).

    In ``.csv`` and ``.tsv`` files, empty cells and pandas's missing-value
    markers (``NA``, ``N/A``, ``NaN``, ``null``, ``None``, ``#N/A``, ...) are
    read as missing, that is *unassigned* labels (see the ``unassigned``
    option of :func:`daskbicl.score`).  ``keep_na=True`` (``daskbicl convert
    --keep-na``) reads only empty cells as missing: a cluster named "NA"
    stays a cluster.  :func:`count_missing` counts what was read as missing.
    """
    path, column = _split_spec(spec)
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file")
    ext = os.path.splitext(path)[1].lower()
    if ext == ".npy":
        if column:
            raise InputError(f"{spec}: a .npy file has no columns; drop ':{column}'")
        try:
            values = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise InputError(f"{path}: cannot read the .npy file: {exc}") from exc
        if values.ndim != 1:
            raise InputError(f"{path}: labels must be a 1-D array, got shape {values.shape}")
        return values
    if ext == ".txt":
        if column:
            raise InputError(f"{spec}: a .txt file has one label per line and no columns; drop ':{column}'")
        try:
            with open(path, encoding="utf-8") as f:
                lines = [line.strip() for line in f if line.strip()]
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: cannot read the text file: {exc}") from exc
        try:
            return np.asarray([int(x) for x in lines], dtype=np.int64)
        except (ValueError, OverflowError):
            return np.asarray(lines, dtype=object)
    df = _table(path, keep_na)
    if column is None:
        if df.shape[1] != 1:
            raise InputError(f"{path} has columns {list(df.columns)}: name one as {path}:COLUMN")
        column = df.columns[0]
    if column not in df.columns:
        raise InputError(f"{path} has no column {column!r}; columns: {list(df.columns)}")
    series = df[column]
    return series.to_numpy() if series.dtype.kind in "iub" else series.to_numpy(dtype=object)


def count_missing(values: np.ndarray) -> int:
    """How many of ``values`` are missing (NaN, None, pandas NA): labels read as unassigned."""
    return int(pd.isna(values).sum()) if values.dtype.kind in "fOc" else 0


def read_mask(spec: str) -> np.ndarray:
    """A ``(K, n)`` boolean mask from ``.npy`` (2-D bool or 0/1) or a headerless ``.csv``/``.tsv`` of 0/1."""
    path, column = _split_spec(spec)
    if column:
        raise InputError(f"{spec}: a mask file is a whole matrix; drop ':{column}'")
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file")
    ext = os.path.splitext(path)[1].lower()
    try:
        if ext == ".npy":
            values = np.load(path, allow_pickle=False)
        elif ext in (".csv", ".tsv", ".txt"):
            values = np.loadtxt(path, delimiter="\t" if ext == ".tsv" else ",", dtype=np.int64, ndmin=2)
        else:
            raise InputError(f"{path}: unknown mask format {ext!r} (use .npy, or .csv/.tsv of 0/1)")
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: cannot read the mask: {exc}") from exc
    if values.ndim != 2:
        raise InputError(f"{path}: a mask must be 2-D (bicluster, row or col), got shape {values.shape}")
    if values.dtype.kind != "b":
        if values.dtype.kind not in "iu" or (values.size and not np.isin(values, (0, 1)).all()):
            raise InputError(f"{path}: a mask must hold booleans or 0/1, got dtype {values.dtype}")
        values = values.astype(bool)
    return values


def read_biclusters_json(path: str) -> list[dict]:
    """A JSON list of ``{"rows": [...], "cols": [...]}`` objects."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: invalid JSON at line {exc.lineno}: {exc.msg}") from exc
    if not isinstance(doc, list):
        raise InputError(f'{path}: expected a JSON list of {{"rows": [...], "cols": [...]}} objects')
    for k, item in enumerate(doc):
        if not isinstance(item, dict) or not {"rows", "cols"} <= set(item):
            raise InputError(f'{path}: item {k} must be an object with "rows" and "cols" lists')
        for key in ("rows", "cols"):
            if not isinstance(item[key], list):
                raise InputError(f"{path}: item {k}: {key!r} must be a list")
    return doc
