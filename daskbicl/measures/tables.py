"""Contingency tables in and out: count once, score many times.

:func:`daskbicl.contingency` counts the row and column contingency tables of two
co-clusterings (the one pass every co-clustering measure needs) and returns
them as a :class:`Contingency`; ``daskbicl.score(tables, measures=...)``
scores from it without reading the data again — every co-clustering
measure, and the bicluster and micro-object measures of the two
co-clusterings, which follow from the same tables.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from ..errors import InputError, TooLargeError
from ..kernels.coclustering.contingency import Table

__all__ = ["Contingency"]

#: Tables with more cells than this are returned as sparse pandas Series.
DENSE_CELLS = 1 << 22


@dataclass(frozen=True)
class Contingency:
    """The row and column contingency tables of two co-clusterings.

    Attributes
    ----------
    row_table, col_table : daskbicl.kernels.coclustering.contingency.Table
        Sparse tables with the original labels (what the measures read).
    dense_cells : int
        Tables up to this many cells are shown dense by :attr:`rows` and
        :attr:`cols`; larger ones as sparse pandas Series.
    """

    row_table: Table
    col_table: Table
    dense_cells: int = DENSE_CELLS

    @property
    def rows(self):
        """n^{zz'}: an ``xarray.DataArray`` (dims ``truth``, ``pred``), or a sparse Series when large."""
        return _labelled(self.row_table, self.dense_cells)

    @property
    def cols(self):
        """n^{ww'}, as :attr:`rows`."""
        return _labelled(self.col_table, self.dense_cells)

    def to_pandas(self, axis: str = "rows") -> pd.Series:
        """Non-zero counts as a Series indexed by ``(truth, pred)`` labels (always sparse)."""
        return _series(self._table(axis))

    def to_xarray(self, axis: str = "rows") -> xr.DataArray:
        """The dense table as a DataArray with the labels as coordinates (refused above ``dense_cells``)."""
        return _dense(self._table(axis), self.dense_cells)

    def _table(self, axis: str) -> Table:
        if axis not in ("rows", "cols"):
            raise InputError(f"axis must be 'rows' or 'cols', got {axis!r}")
        return self.row_table if axis == "rows" else self.col_table

    @property
    def shape(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """``((H, H'), (L, L'))``."""
        return self.row_table.shape, self.col_table.shape

    def __repr__(self) -> str:
        (h, hp), (l_, lp) = self.shape
        return (f"<daskbicl.Contingency rows: {h} x {hp} clusters, {self.row_table.n:,} rows; "
                f"cols: {l_} x {lp} clusters, {self.col_table.n:,} cols>")


def _series(table: Table) -> pd.Series:
    index = pd.MultiIndex.from_arrays(
        [table.truth_labels[table.rows], table.pred_labels[table.cols]], names=["truth", "pred"])
    return pd.Series(table.counts, index=index, name="count")


def _dense(table: Table, limit: int) -> xr.DataArray:
    h, hp = table.shape
    if h * hp > limit:
        raise TooLargeError(
            f"the table has {h:,} x {hp:,} = {h * hp:,} cells, more than dense_cells={limit:,}; "
            "use .to_pandas() for its non-zero cells"
        )
    out = np.zeros((h, hp), dtype=np.int64)
    out[table.rows, table.cols] = table.counts
    return xr.DataArray(out, dims=("truth", "pred"),
                        coords={"truth": table.truth_labels, "pred": table.pred_labels}, name="count")


def _labelled(table: Table, limit: int):
    h, hp = table.shape
    return _dense(table, limit) if h * hp <= limit else _series(table)
