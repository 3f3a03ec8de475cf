"""NetCDF files as inputs: a co-clustering or biclustering written by ``Dataset.to_netcdf``.

A NetCDF file is read by its variables, like a Zarr store without the
``daskbicl_kind`` attribute (``row_labels`` + ``col_labels``, or ``row_mask``
+ ``col_mask``), lazily: every variable becomes a dask array read in chunks
of ``daskbicl.chunk`` entries along ``row``/``col``, so a file larger than
memory is never loaded whole.

NetCDF-3 files (``CDF\\x01``, ``CDF\\x02`` magic) are read with scipy, which
daskbicl depends on; NetCDF-4 files (HDF5 underneath, ``\\x89HDF`` magic)
need the ``h5netcdf`` package (``pip install 'daskbicl[netcdf]'``), or
``netCDF4`` when that is what is installed.  Labels are never CF-decoded
(``mask_and_scale=False``): a ``_FillValue`` of 0 must not turn label 0
into NaN.
"""

from __future__ import annotations

import importlib.util
import os

import xarray as xr

from .. import config
from ..errors import StoreError

__all__ = ["NETCDF_SUFFIXES", "is_netcdf", "open_netcdf"]

#: File name endings read as NetCDF without looking at their first bytes.
NETCDF_SUFFIXES = (".nc", ".nc4", ".netcdf", ".cdf", ".h5", ".hdf5")

_NETCDF3 = (b"CDF\x01", b"CDF\x02", b"CDF\x05")
_HDF5 = b"\x89HDF\r\n\x1a\n"


def _magic(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(8)
    except OSError:
        return b""


def is_netcdf(path) -> bool:
    """True for a local file whose name or first bytes say NetCDF (3 or 4)."""
    text = os.fspath(path)
    if not os.path.isfile(text):
        return False
    head = _magic(text)
    return text.lower().endswith(NETCDF_SUFFIXES) or head.startswith(_NETCDF3) or head.startswith(_HDF5)


def _engine(path: str, role: str) -> str:
    head = _magic(path)
    if head.startswith(_NETCDF3):
        return "scipy"
    if head.startswith(_HDF5):
        for module, engine in (("h5netcdf", "h5netcdf"), ("netCDF4", "netcdf4")):
            if importlib.util.find_spec(module) is not None:
                return engine
        raise StoreError(
            f"{role}: {path} is a NetCDF-4 (HDF5) file; reading it needs the h5netcdf package: "
            "pip install 'daskbicl[netcdf]' (or pip install h5netcdf)"
        )
    raise StoreError(
        f"{role}: {path} is a file but not a NetCDF file (its first bytes are {head[:4]!r}); "
        "daskbicl reads Zarr stores (folders) and NetCDF files written by Dataset.to_netcdf. "
        "For label files (.csv, .txt, .npy, .parquet) use `daskbicl convert`"
    )


def open_netcdf(path, role: str = "input") -> xr.Dataset:
    """Open a NetCDF file lazily (dask arrays chunked along ``row``/``col``).

    Raises
    ------
    StoreError
        When the file is not NetCDF, needs a backend that is not installed,
        or cannot be read; the message names the file.
    """
    text = os.fspath(path)
    engine = _engine(text, role)
    chunk = int(config.get("chunk"))
    try:
        with xr.open_dataset(text, engine=engine, mask_and_scale=False, decode_times=False) as probe:
            chunks = {dim: chunk for dim in ("row", "col", "bicluster") if dim in probe.dims}
        ds = xr.open_dataset(text, engine=engine, chunks=chunks, mask_and_scale=False, decode_times=False)
    except StoreError:
        raise
    except Exception as exc:  # the backends raise OSError, ValueError, KeyError ... for damaged files
        raise StoreError(
            f"{role}: {text} cannot be read as NetCDF ({type(exc).__name__}: {str(exc).strip() or repr(exc)})"
        ) from None
    # Coordinates are read whole (they are matched by label); the labels and masks stay lazy.
    return ds.assign_coords({name: ds[name].load() for name in ds.coords})
