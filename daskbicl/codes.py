"""Labels kept as codes: an unsigned integer per entry and the label of each code.

Stores written by :func:`daskbicl.save` keep a co-clustering's labels this
way (docs/guide/data-model.md): ``row_labels`` on disk holds the smallest
unsigned integer codes that tell the labels apart (``uint8`` for up to 255
clusters), and ``row_label_values`` the label of each code, sorted, so code
order is label order.  Entries that were unassigned get the code after the
last label.

Users never see the codes: :func:`decoded` turns them back into the labels
lazily, chunk by chunk (a dask array), and registers which codes it came
from.  The counting pass asks :func:`coding_of` for that registration and,
when the array it is given is exactly such a decoding, counts the codes
(one byte per label instead of eight, and always the dense fast path) and
puts the label values back on the few table rows and columns at the end.
Any other array (re-indexed, computed from, or not from a store) is counted
as it is: the registry only ever saves work, it never changes a count.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np

__all__ = ["Coding", "code_dtype", "coding_of", "decode_block", "decoded", "label_values", "missing_value"]

#: Codings remembered (least recently used dropped first): one per label array opened.
_KEEP = 1024
_REGISTRY: OrderedDict[str, Coding] = OrderedDict()
_LOCK = threading.Lock()


def code_dtype(n_codes: int) -> np.dtype:
    """The smallest unsigned integer dtype that holds the codes ``0 .. n_codes - 1``.

    Examples
    --------
    >>> [code_dtype(n).name for n in (1, 256, 257, 70_000, 2**33)]
    ['uint8', 'uint8', 'uint16', 'uint32', 'uint64']
    """
    for dtype in (np.uint8, np.uint16, np.uint32):
        if n_codes - 1 <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.uint64)


def missing_value(values: np.ndarray):
    """``(dtype, value)`` of the decoded labels: what an unassigned entry reads back as.

    Integer labels read back with -1 (int64 when the values are unsigned),
    floats with NaN, everything else (strings, bools) as Python objects with
    None, the markers the counting pass recognises as unassigned.
    """
    kind = values.dtype.kind
    if kind == "i":
        return values.dtype, -1
    if kind == "u" and (values.size == 0 or int(values.max()) <= np.iinfo(np.int64).max):
        return np.dtype(np.int64), -1
    if kind == "f":
        return values.dtype, np.nan
    return np.dtype(object), None


def label_values(values: np.ndarray, unassigned: int | None) -> np.ndarray:
    """The decoded label of every code: ``values``, then the unassigned marker when there is one."""
    if unassigned is None:
        if values.dtype.kind in "ifb" or (values.dtype.kind == "u" and missing_value(values)[0].kind != "O"):
            return values
        return values.astype(object)  # strings; unsigned labels beyond 2**63 - 1
    dtype, marker = missing_value(values)
    out = np.empty(values.size + 1, dtype=dtype)
    out[:-1] = values
    out[-1] = marker
    return out


def decode_block(codes: np.ndarray, table: np.ndarray, identity: bool) -> np.ndarray:
    """One chunk of labels from its codes (``table[codes]``; a cast when code k is label k)."""
    codes = np.asarray(codes)
    if identity:
        return codes.astype(table.dtype)
    if codes.size and int(codes.max()) >= table.size:
        from .errors import StoreError

        raise StoreError(f"a label code ({int(codes.max())}) has no label value (only {table.size} are stored)")
    return table.take(codes.astype(np.intp, copy=False))


class Coding:
    """Where a decoded label array came from: its codes, the label values and the unassigned code.

    Not a dataclass on purpose: dask looks inside dataclasses passed to
    tasks, and the codes (a dask array) must never become a dependency of
    the task that only needs :attr:`table`.
    """

    __slots__ = ("codes", "values", "unassigned", "table")

    def __init__(self, codes, values: np.ndarray, unassigned: int | None):
        self.codes = codes
        self.values = values
        self.unassigned = unassigned
        self.table = label_values(values, unassigned)

    @property
    def identity(self) -> bool:
        """Code k is label k (integer labels 0 .. K-1, no unassigned entry): decoding is a cast."""
        v = self.values
        return (self.unassigned is None and v.dtype.kind in "iu"
                and bool(np.array_equal(v, np.arange(v.size, dtype=v.dtype))))


def decoded(codes, values: np.ndarray, unassigned: int | None = None):
    """The labels of ``codes`` (a dask array of unsigned codes) as a lazily decoded dask array.

    The result is registered, so the counting pass counts ``codes`` instead
    whenever it is given this very array (:func:`coding_of`).
    """
    import dask
    import dask.array as da
    from dask.base import tokenize

    coding = Coding(codes, np.asarray(values), unassigned)
    name = "daskbicl-labels-" + tokenize(codes.name, coding.table, unassigned)
    table = coding.table
    if table.nbytes > 1 << 20:  # large tables travel once, as one task, not inside every chunk's task
        table = dask.delayed(table, pure=True)
    out = da.map_blocks(decode_block, codes, table, coding.identity, dtype=coding.table.dtype, name=name,
                        meta=np.empty((0,) * codes.ndim, dtype=coding.table.dtype))
    with _LOCK:
        _REGISTRY[out.name] = coding
        _REGISTRY.move_to_end(out.name)
        while len(_REGISTRY) > _KEEP:
            _REGISTRY.popitem(last=False)
    return out


def coding_of(array) -> Coding | None:
    """The :class:`Coding` of ``array`` if it is exactly a :func:`decoded` array, else None."""
    name = getattr(array, "name", None)
    if not isinstance(name, str) or not name.startswith("daskbicl-labels-"):
        return None
    with _LOCK:
        coding = _REGISTRY.get(name)
        if coding is not None:
            _REGISTRY.move_to_end(name)
    if coding is None or tuple(coding.codes.chunks) != tuple(array.chunks):
        return None
    return coding
