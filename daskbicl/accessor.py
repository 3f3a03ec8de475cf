"""The ``Dataset.bicl`` accessor: thin, generated from the registry.

``truth.bicl.score(pred)`` is ``daskbicl.score(truth, pred)``;
``truth.bicl.cari(pred)`` is ``daskbicl.cari(truth, pred)``, and so on for
every registered measure, with the same signature (less ``truth``) and
docstring; ``truth.bicl.explain(pred)`` is
``daskbicl.explain(truth, pred)``; ``truth.bicl.element_scores(pred, axis=...)`` is
``daskbicl.element_scores(truth, pred, axis=...)``.  No maths here.
"""

from __future__ import annotations

import functools
import inspect

import xarray as xr

from .io.store import save
from .measures import REGISTRY, score
from .measures import functions as _functions
from .measures.explain import explain

__all__ = ["BiclAccessor"]


def _bind(func):
    sig = inspect.signature(func)
    params = list(sig.parameters.values())[1:]  # drop "truth"

    @functools.wraps(func)
    def method(self, *args, **kwargs):
        return func(self._obj, *args, **kwargs)

    method.__signature__ = sig.replace(
        parameters=[inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY), *params]
    )
    return method


@xr.register_dataset_accessor("bicl")
class BiclAccessor:
    """daskbicl on a co-clustering or biclustering Dataset (``ds.bicl``)."""

    def __init__(self, ds: xr.Dataset):
        self._obj = ds

    score = _bind(score)
    explain = _bind(explain)

    def element_scores(self, pred, *, axis: str = "rows") -> xr.DataArray:
        """Each row's, column's or cell's element-centric similarity to ``pred`` (see :func:`daskbicl.element_scores`)."""
        from .measures.field_cells import element_scores

        return element_scores(self._obj, pred, axis=axis)

    def save(self, path, **kwargs) -> str:
        """Write this Dataset as a daskbicl Zarr store (see :func:`daskbicl.save`)."""
        return save(self._obj, path, **kwargs)


for _name in REGISTRY:
    setattr(BiclAccessor, _name, _bind(getattr(_functions, _name)))
