"""xarray + Zarr: open, validate, align, save, generate."""

from .align import align
from .store import open_store, save
from .validate import as_dataset, kind_of

__all__ = ["align", "as_dataset", "kind_of", "open_store", "save"]
