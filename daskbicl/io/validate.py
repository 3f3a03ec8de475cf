"""The one place inputs are checked and normalised.

Every public entry point (functions, accessor, CLI, batch) passes its inputs
through :func:`as_dataset`, which accepts a Dataset in the data-model layout (docs/guide/data-model.md), a
path or URL of a daskbicl Zarr store, or a tuple ``(row_labels, col_labels)``
of numpy or dask arrays, and returns a validated, lazily-backed Dataset.

Checks that need only metadata (types, dtypes, names, dimensions, lengths)
happen here, before any computation.  Checks that need the values (negative
or too-large labels) run inside the counting pass itself, chunk by chunk, so
the data are read once; see :func:`daskbicl.kernels.contingency.check_labels`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import xarray as xr

from ..errors import InputError, LabelError
from ..kernels.contingency import check_label_bounds

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
    if declared is not None and declared not in KINDS:
        raise InputError(
            f"{role}: attribute daskbicl_kind={declared!r} is not one of {list(KINDS)}"
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
    """Reject dtypes that cannot hold cluster labels, with a specific message."""
    try:
        dtype = np.dtype(values.dtype)
    except TypeError:
        raise LabelError(
            f"{name} has dtype {values.dtype!r}, which is not a numpy dtype; labels must be "
            "non-negative integers (convert with .to_numpy('int64'))"
        ) from None
    if dtype.kind in "iu":
        return
    if dtype.kind == "b":
        raise LabelError(
            f"{name} has dtype bool; labels must be non-negative integers "
            "(cast with .astype('int64') if True/False really are two clusters)"
        )
    if dtype.kind == "f":
        detail = ""
        if isinstance(values, np.ndarray):
            n_nan = int(np.isnan(values).sum())
            if n_nan:
                detail = f" and {n_nan:,} NaN values (NaN is not a label: assign unclustered rows a label of their own)"
            elif values.size and not np.all(np.mod(values, 1) == 0):
                detail = " and non-integer values"
        raise LabelError(
            f"{name} has floating dtype {dtype}{detail}; labels must be non-negative integers"
        )
    raise LabelError(
        f"{name} has dtype {dtype} ({_kind_name(dtype)}); labels must be non-negative integers"
    )


def check_mask_dtype(values, name: str) -> None:
    dtype = np.dtype(values.dtype)
    if dtype.kind != "b":
        raise InputError(f"{name} has dtype {dtype}; bicluster masks must be bool")


def _kind_name(dtype: np.dtype) -> str:
    return {
        "O": "Python objects",
        "U": "strings",
        "T": "strings",
        "S": "bytes",
        "c": "complex numbers",
        "M": "datetimes",
        "m": "timedeltas",
        "V": "raw records",
    }.get(dtype.kind, "unsupported")


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
        values = _pandas_to_numpy(values, name)
        if not hasattr(values, "dtype"):
            values = _sequence_to_array(values, name)
        if getattr(values, "ndim", None) != 1:
            raise InputError(
                f"{role} {axis}_labels must be 1-D, got shape {tuple(values.shape)}"
            )
        arrays.append(values)
    return xr.Dataset(
        {"row_labels": ("row", arrays[0]), "col_labels": ("col", arrays[1])},
        attrs={"daskbicl_kind": PARTITION},
    )


def _pandas_to_numpy(values, name: str):
    """pandas Series/Index/extension arrays (e.g. nullable ``Int64``) to numpy."""
    if isinstance(values, np.ndarray) or not hasattr(values, "to_numpy") or not hasattr(values, "isna"):
        return values
    n_missing = int(np.asarray(values.isna()).sum())
    if n_missing:
        raise LabelError(
            f"{name} has {n_missing:,} missing values (NA); every row/column needs a label "
            "(give unclustered ones a label of their own)"
        )
    kind = getattr(getattr(values, "dtype", None), "kind", "O")
    # Nullable integers become numpy integers of the same signedness (UInt64
    # labels of 2**63 or more then get check_label_bounds' message, not a wrap).
    return values.to_numpy(dtype={"i": np.int64, "u": np.uint64}.get(kind))


def _sequence_to_array(values, name: str) -> np.ndarray:
    """A Python sequence of labels to an integer array, with the kernel's messages.

    ``np.asarray`` would turn ``[0, 2**63]`` into float64 (merging distinct
    huge labels) and ``[]`` into float64; integers are checked as Python ints.
    """
    items = list(values)
    if not items:
        return np.zeros(0, dtype=np.int64)
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in items):
        check_label_bounds(min(int(v) for v in items), max(int(v) for v in items), name)
        return np.asarray(items, dtype=np.int64)
    try:
        return np.asarray(items)
    except (OverflowError, ValueError) as exc:
        raise LabelError(f"{name} cannot be read as an integer array: {exc}") from exc


def as_dataset(obj, role: str = "input", *, kinds: Sequence[str] = KINDS, allow_empty: bool = False) -> xr.Dataset:
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
    if ds.attrs.get("daskbicl_kind") != kind:
        ds = ds.assign_attrs(daskbicl_kind=kind)
    return ds
