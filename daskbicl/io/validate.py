"""The one place inputs are checked and normalised.

Every public entry point (functions, accessor, CLI, batch) passes its inputs
through :func:`as_dataset`, which accepts a Dataset in the data-model layout (docs/guide/data-model.md), a
path or URL of a daskbicl Zarr store, or a tuple ``(row_labels, col_labels)``
of numpy or dask arrays, and returns a validated, lazily-backed Dataset.

Checks that need only metadata (types, dtypes, names, dimensions, lengths)
happen here, before any computation.  Checks that need the values
(unassigned entries, unhashable labels) run inside the counting pass itself,
chunk by chunk, so the data are read once; see :mod:`daskbicl.engine.labels`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pandas as pd
import xarray as xr

from ..errors import InputError, LabelError
from ..kernels.coclustering.contingency import DEFAULT_POLICY, UNASSIGNED_ATTR, check_policy

__all__ = ["KINDS", "as_dataset", "kind_of", "check_label_dtype", "check_mask_dtype"]

PARTITION = "partition"
BICLUSTERING = "biclustering"
KINDS = (PARTITION, BICLUSTERING)

#: Variables and dimensions each kind must have (docs/guide/data-model.md).
LAYOUT = {
    PARTITION: {"row_labels": ("row",), "col_labels": ("col",)},
    BICLUSTERING: {"row_mask": ("bicluster", "row"), "col_mask": ("bicluster", "col")},
}


def kind_of(ds: xr.Dataset, role: str = "input") -> str:
    """Which kind of object ``ds`` is, from its variables (and its attribute)."""
    has_partition = all(v in ds.data_vars for v in LAYOUT[PARTITION])
    has_bicl = all(v in ds.data_vars for v in LAYOUT[BICLUSTERING])
    declared = ds.attrs.get("daskbicl_kind")
    if declared is not None and not (isinstance(declared, str) and declared in KINDS):
        shown = declared.tolist() if isinstance(declared, np.ndarray) else declared
        raise InputError(
            f"{role}: attribute daskbicl_kind={shown!r} is not one of {list(KINDS)}"
        )
    if has_partition and not has_bicl:
        found = PARTITION
    elif has_bicl and not has_partition:
        found = BICLUSTERING
    elif has_bicl and has_partition:
        found = declared or PARTITION
    else:
        names = sorted(map(str, ds.data_vars))
        raise InputError(
            f"{role}: expected variables 'row_labels' and 'col_labels' (a co-clustering) or "
            f"'row_mask' and 'col_mask' (a biclustering), found {names}"
        )
    if declared is not None and declared != found:
        raise InputError(
            f"{role}: attribute daskbicl_kind={declared!r} but the variables describe a {found}"
        )
    return found


def check_label_dtype(values, name: str) -> None:
    """Reject dtypes that cannot hold cluster labels, with a specific message.

    Labels may be any hashable value (docs/guide/data-model.md): integers of
    any width, strings, bytes, Python objects, floats, bools.  Only dtypes
    whose elements are not single values are refused here; the values
    themselves (unhashable objects, unassigned entries) are checked inside
    the counting pass, chunk by chunk.
    """
    try:
        dtype = np.dtype(values.dtype)
    except TypeError:
        raise LabelError(
            f"{name} has dtype {values.dtype!r}, which is not a numpy dtype; pass a numpy or dask array, "
            "a pandas Series/Categorical or a list of labels"
        ) from None
    if dtype.kind == "V":
        raise LabelError(f"{name} has dtype {dtype} (raw records), which cannot hold labels")


def check_mask_dtype(values, name: str) -> None:
    dtype = np.dtype(values.dtype)
    if dtype.kind != "b":
        raise InputError(f"{name} has dtype {dtype}; bicluster masks must be bool")


def _from_tuple(obj: Sequence, role: str) -> xr.Dataset:
    if len(obj) != 2:
        raise InputError(
            f"{role}: a tuple input must be (row_labels, col_labels), got {len(obj)} items"
        )
    arrays = []
    for axis, values in zip(("row", "col"), obj):
        name = f"{role} {axis}_labels"
        if isinstance(values, xr.DataArray):
            values = values.data
        values = _unmask(values)
        values = _pandas_to_numpy(values, name)
        if not hasattr(values, "dtype"):
            _check_ordered(values, name)
            values = _sequence_to_array(values, name)
        if getattr(values, "ndim", None) != 1:
            raise InputError(
                f"{role} {axis}_labels must be 1-D, got shape {tuple(values.shape)}"
            )
        arrays.append(values)
    return xr.Dataset(
        {"row_labels": _label_variable("row", arrays[0]), "col_labels": _label_variable("col", arrays[1])},
        attrs={"daskbicl_kind": PARTITION},
    )


def _unmask(values):
    """A numpy masked array as labels: its data, with masked entries unassigned (None).

    xarray would fill masked entries with NaN and turn integer labels into
    floats (and fail for dtypes NaN does not fit).
    """
    if not isinstance(values, np.ma.MaskedArray):
        return values
    mask = np.ma.getmaskarray(values)
    if not mask.any():
        return np.asarray(values.data)
    out = np.asarray(values.data).astype(object)
    out[mask] = None
    return out


def _label_variable(dim: str, values) -> xr.Variable:
    """An xarray Variable holding ``values`` as they are.

    xarray runs numpy object arrays through pandas to convert datetime-like
    objects; with pandas' string inference that turns 10^7 Python strings
    into an Arrow array and back into 10^7 new str objects (9 s, +3 GB),
    and labels are never datetimes to convert.  ``fastpath`` keeps the array.
    """
    if isinstance(values, np.ndarray) and values.dtype == object:
        return xr.Variable((dim,), values, fastpath=True)
    return xr.Variable((dim,), values)


def _pandas_to_numpy(values, name: str):
    """pandas Series/Index/Categorical/extension arrays to numpy labels.

    A categorical becomes its integer codes (free: no hashing; missing
    values are the code -1, which is *unassigned*).  Nullable integers
    become int64 with -1 for NA (unsigned: uint64, NA checked first).  Other
    extension arrays (strings, nullable floats) become object arrays with
    None for NA.
    """
    if isinstance(values, np.ndarray) or not hasattr(values, "to_numpy") or not hasattr(values, "isna"):
        return values
    dtype = getattr(values, "dtype", None)
    if isinstance(dtype, pd.CategoricalDtype):
        return np.asarray(pd.Categorical(values).codes)
    kind = getattr(dtype, "kind", "O")
    try:
        has_na = bool(np.asarray(values.isna()).any())
    except TypeError:  # a dtype pandas cannot test for missing values (raw records): checked as numpy
        return values.to_numpy()
    if kind == "i":
        return values.to_numpy(dtype=np.int64, na_value=-1)
    if kind == "u" and not has_na:
        return values.to_numpy(dtype=np.uint64)
    if kind == "b" and not has_na:
        return values.to_numpy(dtype=bool)
    if kind == "f" and dtype is not None and not isinstance(dtype, np.dtype):  # nullable Float64
        return values.to_numpy(dtype=np.float64, na_value=np.nan)
    if isinstance(dtype, np.dtype):
        return values.to_numpy()
    return values.to_numpy(dtype=object, na_value=None)


def _check_ordered(values, name: str) -> None:
    """Labels come one per row, in row order: refuse containers that have no order or are not sequences."""
    if isinstance(values, (str, bytes)):
        raise InputError(f"{name} is a single {type(values).__name__} ({values[:20]!r}); pass a list or array "
                         "with one label per row/column")
    if isinstance(values, (set, frozenset)):
        raise InputError(f"{name} is a {type(values).__name__}, which has no order; pass a list or array with "
                         "one label per row/column, in order")
    if isinstance(values, dict):
        raise InputError(f"{name} is a dict; pass a list or array with one label per row/column "
                         "(e.g. list(d.values()) in row order)")
    if not hasattr(values, "__iter__"):
        raise InputError(f"{name} must be a list or array of labels, got {type(values).__name__}")


def _sequence_to_array(values, name: str) -> np.ndarray:
    """A Python sequence of labels to an array, without merging distinct labels.

    ``np.asarray`` would turn ``[0, 2**63]`` into float64 (merging distinct
    huge labels), ``[]`` into float64 and ``["a", 1]`` into strings ("1" ==
    1); integers are kept as int64 when they fit, everything else becomes
    an object array of the values as given.
    """
    items = list(values)
    if not items:
        return np.zeros(0, dtype=np.int64)
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in items):
        lo, hi = min(int(v) for v in items), max(int(v) for v in items)
        if -(1 << 63) <= lo and hi < (1 << 63):
            return np.asarray(items, dtype=np.int64)
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def as_dataset(obj, role: str = "input", *, kinds: Sequence[str] = KINDS, allow_empty: bool = False,
               unassigned: str | None = None) -> xr.Dataset:
    """Return ``obj`` as a validated daskbicl Dataset.

    Parameters
    ----------
    obj : xarray.Dataset or tuple
        A Dataset in the co-clustering or biclustering layout, or
        ``(row_labels, col_labels)`` arrays (numpy or dask).  Paths and
        fitted models go through :func:`daskbicl.io.inputs.as_input`.
    role : str
        "truth" or "pred": used in error messages.
    kinds : sequence of str
        The kinds the caller accepts.
    allow_empty : bool
        Accept a biclustering with zero biclusters (a pred that found
        nothing, docs/guide/data-model.md); otherwise it is an error naming ``role``.
    unassigned : {"error", "cluster", "singleton"}, optional
        What unassigned labels (NaN, None, NA, negative integers) mean;
        recorded as ``attrs["daskbicl_unassigned"]`` for the counting pass.
        Default: the policy ``ds`` already carries, else "error".

    Returns
    -------
    xarray.Dataset
        With ``attrs["daskbicl_kind"]`` set.

    Raises
    ------
    InputError, LabelError, StoreError
    """
    if isinstance(obj, (str, os.PathLike)):  # stores are opened by io.inputs.as_input
        raise InputError(f"{role}: {os.fspath(obj)!r} is a path; open it with daskbicl.open() first")
    if isinstance(obj, xr.Dataset):
        ds = obj
    elif isinstance(obj, (tuple, list)):
        ds = _from_tuple(obj, role)
    else:
        raise InputError(
            f"{role}: expected an xarray.Dataset, a Zarr store path or URL, or a tuple "
            f"(row_labels, col_labels); got {type(obj).__name__}"
        )
    kind = kind_of(ds, role)
    if kind not in kinds:
        raise InputError(f"{role} is a {kind}, but this operation needs a {' or '.join(kinds)}")
    for var, dims in LAYOUT[kind].items():
        if tuple(ds[var].dims) != dims:
            raise InputError(
                f"{role}: variable {var!r} must have dimensions {dims}, got {tuple(ds[var].dims)}"
            )
    for dim in ("row", "col"):
        if ds.sizes.get(dim, 0) == 0:
            raise InputError(f"{role} has an empty '{dim}' axis (0 {dim}s); nothing to score")
    for var in LAYOUT[kind]:
        if kind == PARTITION:
            check_label_dtype(ds[var].data, f"{role} {var}")
        else:
            check_mask_dtype(ds[var].data, f"{role} {var}")
    if kind == BICLUSTERING and ds.sizes.get("bicluster", 0) == 0 and not allow_empty:
        raise InputError(f"{role} has no biclusters")
    policy = check_policy(ds.attrs.get(UNASSIGNED_ATTR) if unassigned is None else unassigned)
    # The policy travels to the counting pass as an attribute, present only
    # when it is not the default (so Datasets users see stay as they built them).
    if ds.attrs.get("daskbicl_kind") != kind or ds.attrs.get(UNASSIGNED_ATTR, DEFAULT_POLICY) != policy \
            or ds.attrs.get(UNASSIGNED_ATTR, policy) != policy:
        attrs = {k: v for k, v in ds.attrs.items() if k != UNASSIGNED_ATTR}
        attrs["daskbicl_kind"] = kind
        if policy != DEFAULT_POLICY:
            attrs[UNASSIGNED_ATTR] = policy
        ds = ds.copy()
        ds.attrs = attrs
    return ds
