"""Labels as users have them: any hashable value, and unassigned entries.

Labels are compared for equality only (docs/guide/data-model.md), so the
counting pass needs nothing but a consistent integer code per distinct
label.  This module turns each chunk of labels into such codes *inside* the
chunked pass (a dask array is never loaded whole), and turns the merged
counts back into a :class:`~daskbicl.kernels.coclustering.contingency.Table` under the
caller's *unassigned* policy.

Encoding a chunk (:func:`encode_chunk`):

* integer arrays (any width, signed or unsigned) are their own codes: no
  copy, no hashing; negative values are *unassigned* and become ``-1``;
  unsigned values above ``2**63 - 1`` go through the hash table below;
* numpy strings (``U``, ``StringDType``) are coded by their words in a
  compiled hash table (:mod:`daskbicl.kernels.coclustering.string_codes`, exact, linear time);
* every other dtype (bytes, Python objects, floats, bools, datetimes) is
  factorised with ``pandas.factorize`` (a hash table, linear time) or by
  its bit patterns; NaN, None and ``pandas.NA`` are unassigned (code ``-1``) and the
  chunk's pair counts carry the label *values* (an object array, ``None``
  for unassigned), so chunks factorised independently merge exactly by value.

The unassigned marker is ``-1`` in integer label arrays and ``None`` in
object label arrays; :func:`to_table` counts them and applies the policy:

* ``"error"`` (default): :class:`~daskbicl.errors.LabelError` naming how many
  entries are unassigned, on which side and axis;
* ``"cluster"``: all unassigned entries of one side and axis form one extra
  cluster;
* ``"singleton"``: each unassigned entry is a cluster of its own.
"""

from __future__ import annotations

import ctypes
import warnings

import numpy as np
import pandas as pd

from ..errors import LabelError
from ..kernels.coclustering.contingency import (
    DEFAULT_POLICY,
    DENSE_CELLS,
    MAX_LABEL,
    POLICIES,
    DenseCounts,
    LabelledCounts,
    PairCounts,
    Table,
    check_policy,
    count_pairs,
    merge_pairs,
    pair_keys,
    sum_by,
    worth_a_block,
)
from .label_grids import as_object, merge_grids, with_values
from .spread_labels import _FEW, _SAMPLE, narrow_string_codes, rank_codes

#: What counting a chunk, or merging chunks, gives (kernels/coclustering/contingency.py).
Counts = PairCounts | DenseCounts | LabelledCounts

__all__ = [
    "POLICIES", "DEFAULT_POLICY", "check_policy", "count_labels", "count_keys", "decode_pairs", "encode_chunk",
    "merge_labelled", "rank_codes",
    "to_table", "unassigned_count", "warm_string_codes",
]

def _by_value(values: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """``pandas.factorize`` with NaN/None/NA -> -1, and a clear error for unhashable values."""
    try:
        codes, uniques = pd.factorize(values, use_na_sentinel=True)
    except TypeError as exc:  # e.g. a list inside an object array
        raise LabelError(f"{name} holds a value that cannot be a label (labels must be hashable): {exc}") from None
    return codes.astype(np.int64, copy=False), np.asarray(uniques, dtype=object)


#: Below this many labels a chunk is factorised by value directly.
_SMALL = 4096


def _addresses(values: np.ndarray) -> np.ndarray:
    """The object pointers a C-contiguous 1-D object array holds, as an intp view of its memory.

    numpy stores an object array as an array of ``PyObject*``; the view is
    only read while ``values`` (which owns the references) is alive.
    """
    buffer = (ctypes.c_ssize_t * values.size).from_address(values.ctypes.data)
    return np.frombuffer(memoryview(buffer), dtype=np.intp)


def _factorize_objects(values: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Factorise Python objects, first by identity (an integer hash table that
    needs no Python call), then the few distinct objects by value.

    Label arrays repeat a few objects millions of times (``names[codes]``,
    a pandas column, ``list * n``), so the by-value step sees only the
    distinct objects.  Equal objects at different addresses are merged by
    that step, so the result is exact either way; when most of the first
    4096 objects are distinct, the identity step is skipped.
    """
    values = np.ascontiguousarray(values)
    if values.size < _SMALL or np.dtype(np.intp).itemsize != 8:
        return _by_value(values, name)
    pointers = _addresses(values)
    if 2 * pd.unique(pointers[:_SMALL]).size > _SMALL:  # mostly distinct objects: identity does not help
        return _by_value(values, name)
    by_address, addresses = rank_codes(pointers)  # addresses are spread integers: rank-coded
    if 2 * addresses.size > values.size:
        return _by_value(values, name)
    # The distinct objects themselves, from their addresses (``values`` holds a reference to each).
    distinct = np.empty(addresses.size, dtype=object)
    distinct[:] = [ctypes.cast(int(a), ctypes.py_object).value for a in addresses]
    codes, uniques = _by_value(distinct, name)
    return codes.take(by_address), uniques


#: Odd 64-bit weights (below 2**63) of the row hash of :func:`~daskbicl.kernels.coclustering.string_codes.row_codes`, one per word.
_WEIGHTS = np.random.default_rng(0x5EED).integers(1, 2**62, 4096, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
#: Rows of up to this many 32-bit words get a kernel compiled for their width (loops of fixed length);
#: wider rows share one kernel.  Measured: each width costs a compile of about 1 s on a quiet
#: machine (several under load), and the shared kernel is 1.6-2.5x slower than a width's own
#: (5*10^6 labels, docs/guide/cluster.md); 8 words cover numpy ``U`` labels of up to 8
#: characters and every ASCII ``StringDType`` label of up to 31 bytes.
_UNROLLED = 8
#: StringDType strings of more characters than this are factorised as Python strings.
_MAX_WIDTH = 32


def _word_codes(words: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, first)``: exact codes of the rows of a C-contiguous ``(n, width)`` uint32 matrix, in
    order of first appearance, and the first row of each code (a numba hash table, linear time)."""
    from ..kernels.coclustering.string_codes import row_codes

    width = words.shape[1]
    weights = np.resize(_WEIGHTS, width)
    return row_codes(words, tuple(int(w) for w in weights) if width <= _UNROLLED else weights)


def _factorize_fixed_width(values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Factorise fixed-width unicode (numpy ``U``) without making Python strings: its UTF-32 words.

    Short Latin-1 strings are integers, rank-coded
    (:func:`~daskbicl.engine.spread_labels.narrow_string_codes`); others are
    coded by their words.  Equal words are equal strings (numpy pads with
    NUL characters and ignores trailing NULs, so ``"a"`` and ``"a\\x00"`` are
    one value there too).
    """
    width = values.dtype.itemsize // 4
    if values.size < _SMALL or width == 0:
        return None
    narrow = narrow_string_codes(values)  # short Latin-1 strings: integers, rank-coded
    if narrow is not None:
        return narrow
    values = np.ascontiguousarray(values).reshape(-1)
    codes, first = _word_codes(values.view(np.uint32).reshape(values.size, width))
    return codes, values[first].astype(object)


def _string_words(values: np.ndarray) -> np.ndarray | None:
    """The 16 bytes numpy's ``StringDType`` keeps per element, as an ``(n, 2)`` uint64 view (no copy).

    A short string (up to 15 bytes) is kept inside those bytes with its
    length; a longer one as the place of its bytes and its length.  Either
    way equal words mean equal strings (the converse need not hold: equal
    long strings stored apart have different words), which is all
    :func:`_factorize_string_dtype` relies on.
    """
    if values.dtype.itemsize != 16 or not values.flags.c_contiguous or np.dtype(np.intp).itemsize != 8:
        return None
    buffer = (ctypes.c_char * (values.size * 16)).from_address(values.ctypes.data)
    return np.frombuffer(memoryview(buffer), dtype=np.uint64).reshape(values.size, 2)


#: A StringDType chunk with more distinct stored forms than this fraction of its size (long
#: strings: each is stored apart) is factorised by its characters instead (:func:`_factorize_variable_width`).
_FORMS = 1 / 8


def _factorize_string_dtype(values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Factorise ``StringDType`` strings by the words that store them, without making Python strings.

    Equal words are equal strings, so the elements' 16-byte words are coded
    exactly (:func:`_word_codes`); the few distinct stored forms are then
    turned into strings and merged by value, so equal strings stored apart
    (long strings, each in its own place) get one code.  None when the
    stored forms are many (see :data:`_FORMS`).
    """
    if values.size < _SMALL or hasattr(values.dtype, "na_object"):
        return None
    values = np.ascontiguousarray(values).reshape(-1)
    words = _string_words(values)
    if words is None:
        return None
    from ..kernels.coclustering.string_codes import pair_codes

    codes, first = pair_codes(words)
    if first.size > _FORMS * values.size:
        return None
    merged, uniques = pd.factorize(values[first].astype(object))
    if merged.size == uniques.size:  # every stored form a different string: the codes stand
        return codes, np.asarray(uniques, dtype=object)
    return merged.astype(np.int64, copy=False).take(codes), np.asarray(uniques, dtype=object)


def _factorize_variable_width(values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Factorise numpy's variable-width strings (``StringDType``) by their characters.

    ASCII strings of up to :data:`_MAX_WIDTH` characters are encoded to
    zero-padded bytes (fast C casts, at most 32 bytes a label) whose 32-bit
    words are coded exactly (:func:`_word_codes`).  numpy's string casts and
    ``str_len`` ignore trailing NUL characters, so each string gets a final
    ``"."`` first: ``"a"`` and ``"a\\x00"`` stay distinct.  Anything else
    (non-ASCII, longer, a dtype with a missing-value marker) returns None
    for the by-value path.
    """
    if values.size < _SMALL or hasattr(values.dtype, "na_object"):
        return None
    ended = np.strings.add(values, ".")
    width = int(np.strings.str_len(ended).max())
    if width > _MAX_WIDTH:
        return None
    width = -(-width // 4) * 4
    try:
        encoded = np.ascontiguousarray(ended.astype(f"S{width}"))
    except UnicodeEncodeError:
        return None
    codes, first = _word_codes(encoded.view(np.uint32).reshape(values.size, width // 4))
    return codes, values[first].astype(object)


def warm_string_codes() -> int:
    """Compile (or load from numba's cache) every string-label kernel the factorisers use; the widths warmed.

    Runs the real paths on small arrays: numpy ``U`` strings of every width
    that gets its own kernel (1 .. :data:`_UNROLLED` words) and one wider
    (the shared kernel), enough distinct labels to grow the hash table, and
    a ``StringDType`` array (stored words).
    """
    labels = np.arange(_SMALL) % 7
    _factorize_fixed_width(labels.astype("U2"))  # short Latin-1 strings: packed into integers
    for width in range(1, _UNROLLED + 2):  # the word hash table of every width (other characters, wider strings)
        padded = np.char.zfill(labels.astype(f"U{width}"), width)
        _word_codes(np.ascontiguousarray(padded).view(np.uint32).reshape(padded.size, width))
    distinct = np.arange(_SMALL).astype("U4")  # distinct labels: the table grows (the rehash)
    _word_codes(distinct.view(np.uint32).reshape(distinct.size, 4))
    if hasattr(np.dtypes, "StringDType"):
        _factorize_string_dtype(labels.astype(str).astype(np.dtypes.StringDType()))
    return _UNROLLED + 1


def _factorize(values: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Codes (-1: unassigned) and the label of each code, for any non-integer labels."""
    kind = values.dtype.kind
    if kind in "UT":
        fast = _factorize_fixed_width(values) if kind == "U" else (
            _factorize_string_dtype(values) or _factorize_variable_width(values))
        if fast is not None:
            return fast
    if kind in "UST":  # new Python strings, all distinct objects: pandas hashes them ~3x faster than numpy's
        return _by_value(values.astype(object), name)
    if kind == "O":
        return _factorize_objects(values, name)
    if kind == "f":
        fast = _factorize_integral(values)
        if fast is not None:
            return fast
    if kind in "fbmM" and values.dtype.itemsize in (1, 2, 4, 8):
        fast = _factorize_bits(values, name)
        if fast is not None:
            return fast
    return _by_value(values, name)


def _factorize_integral(values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Integral floats over a narrow range (labels 0.0, 1.0, ... as pandas and R write them): offsets are codes.

    One cast to int64 and one comparison: ``codes = value - lo`` and
    ``uniques = lo, lo + 1, ..., hi`` as floats (codes of values absent from
    the chunk count nothing, as with integer labels).  NaN is unassigned
    (-1); 0.0 and -0.0 get one code, as by value.  None when a value is not
    integral or the range is wider than the chunk (the general paths then).
    """
    if values.size < _SMALL or values.dtype != np.float64:
        return None
    flat = np.ascontiguousarray(values).reshape(-1)
    with warnings.catch_warnings(), np.errstate(invalid="ignore", over="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN chunk: nanmin is NaN, handled below
        lo, hi = np.nanmin(flat), np.nanmax(flat)
        if not (np.isfinite(lo) and np.isfinite(hi)) or hi - lo >= max(4 * flat.size, _SMALL) \
                or max(abs(lo), abs(hi)) >= 2.0**53:
            return None
        as_int = flat.astype(np.int64)
    nan = flat != flat
    if not np.array_equal(as_int[~nan], flat[~nan]) if nan.any() else not np.array_equal(as_int, flat):
        return None
    base = int(lo)
    codes = as_int
    codes -= base
    if nan.any():
        codes[nan] = -1
    return codes, np.arange(base, int(hi) + 1, dtype=np.int64).astype(flat.dtype)


def _factorize_bits(values: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray] | None:
    """Factorise fixed-width values (floats, bools, datetimes) by their bit patterns, then by value.

    Equal bits are equal values, so the bit patterns are rank-coded like
    spread integers (:func:`rank_codes`); the few distinct patterns are then
    factorised by value, which merges the values stored with different
    bits (0.0 and -0.0) and makes NaN unassigned.  None when there are many
    distinct values (the by-value path is as fast then).
    """
    if values.size < _SMALL:
        return None
    flat = np.ascontiguousarray(values).reshape(-1)
    bits = flat.view(f"u{flat.dtype.itemsize}")
    bits = bits.view(np.int64) if flat.dtype.itemsize == 8 else bits.astype(np.int64)
    step = max(1, bits.size // _SAMPLE)
    if 2 * pd.unique(bits[::step][:_SMALL]).size > _SMALL:
        return None
    codes, patterns = rank_codes(bits)
    if 2 * patterns.size > values.size:
        return None
    distinct = patterns.astype(f"u{flat.dtype.itemsize}").view(flat.dtype)
    merged, uniques = _by_value(distinct, name)
    return merged.take(codes), uniques


def count_keys(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct keys, counts)`` by hashing (``pandas.factorize`` + ``np.bincount``): linear time, no sort."""
    codes, uniques = pd.factorize(keys)
    return np.asarray(uniques), np.bincount(codes, minlength=len(uniques))


def encode_chunk(values, name: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Integer codes of one chunk of labels, and the label of each code (or None).

    Returns ``(codes, uniques)``: ``codes`` is an integer array with ``-1``
    for unassigned entries; ``uniques`` is None when the codes are the labels
    themselves (integer input), otherwise ``uniques[codes]`` are the labels.

    Examples
    --------
    >>> encode_chunk(np.array([3, -1, 3]), "x")[0].tolist()
    [3, -1, 3]
    >>> codes, uniques = encode_chunk(np.array(["b", None, "a", "b"], dtype=object), "x")
    >>> codes.tolist(), uniques.tolist()
    ([0, -1, 1, 0], ['b', 'a'])
    """
    values = np.asarray(values).reshape(-1)
    kind = values.dtype.kind
    if kind in "iu":
        # Integers are their own codes; the counting kernel finds their range
        # (and the unassigned negatives) itself, in one pass per side.
        if kind == "u" and values.dtype.itemsize == 8 and values.size and int(values.max()) > MAX_LABEL:
            return _factorize(values, name)
        return values, None
    if kind in "V":
        raise LabelError(f"{name} has dtype {values.dtype} (raw records), which cannot hold labels")
    return _factorize(values, name)


def _labels_of(codes: np.ndarray, uniques: np.ndarray) -> np.ndarray:
    """Object array of the labels of ``codes``; None where the code is -1."""
    out = np.empty(codes.size, dtype=object)
    ok = codes >= 0
    out[ok] = uniques[codes[ok]]
    return out


def count_labels(truth, pred, names: tuple[str, str]) -> Counts:
    """Count the label pairs of one chunk of any label types (see the module docs)."""
    ct, ut = encode_chunk(truth, names[0])
    cp, up = encode_chunk(pred, names[1])
    pairs = count_pairs(ct, cp, names, unassigned=True, factorize=rank_codes, count_keys=count_keys)
    if ut is None and up is None:
        return pairs
    if isinstance(pairs, (DenseCounts, LabelledCounts)) and \
            worth_a_block(int(np.count_nonzero(pairs.table)), pairs.table.size):  # a block over the label values
        return with_values(pairs, ut, up)
    pairs = pairs.to_pairs()
    return PairCounts(
        pairs.truth if ut is None else _labels_of(pairs.truth, ut),
        pairs.pred if up is None else _labels_of(pairs.pred, up),
        pairs.count,
    )


def _decoded_side(codes: np.ndarray, table: np.ndarray | None, name: str) -> np.ndarray:
    """Labels of the codes a stored label array was counted as (:mod:`daskbicl.codes`)."""
    if table is None:
        return codes
    if codes.size and (int(codes.min()) < 0 or int(codes.max()) >= table.size):
        bad = int(codes.max()) if codes.size and int(codes.max()) >= table.size else int(codes.min())
        raise LabelError(f"{name} holds the code {bad}, which has no label value (the store lists {table.size})")
    labels = table[codes]
    if table.dtype.kind in "iu":
        return labels.astype(np.int64, copy=False)
    if table.dtype != object:  # floats, bools: Python objects, NaN as None, as a factorised chunk gives them
        labels = labels.astype(object)
        labels[pd.isna(labels)] = None
    return labels


def decode_pairs(pairs: Counts, tables, names) -> Counts:
    """Pair counts of codes with the label values put back (``tables``: per side, the label of each code or None)."""
    if all(t is None for t in tables):
        return pairs
    p = pairs.to_pairs()
    return PairCounts(_decoded_side(p.truth, tables[0], names[0]), _decoded_side(p.pred, tables[1], names[1]),
                      p.count)


def _is_object(part, side: str) -> bool:
    return isinstance(part, PairCounts) and getattr(part, side).dtype == object


#: Merges of more pairs than this hash their pair keys instead of sorting them.
_HASH_MERGE = 1 << 15


def _dense_fits(parts) -> bool:
    """All parts dense, and their sum a dense table of at most ``DENSE_CELLS`` cells."""
    if not all(isinstance(p, DenseCounts) for p in parts):
        return False
    rows = max(p.truth_hi for p in parts) - min(p.truth_lo for p in parts) + 1
    cols = max(p.pred_hi for p in parts) - min(p.pred_lo for p in parts) + 1
    return rows * cols <= DENSE_CELLS


def _few(values: np.ndarray) -> bool:
    """Few distinct labels in an evenly spaced sample (what :func:`rank_codes` codes by a lookup)."""
    return np.unique(values[:: max(1, values.size // _SAMPLE)]).size <= _FEW


def _few_pairs(truth: np.ndarray, pred: np.ndarray, count: np.ndarray) -> PairCounts | None:
    """Pairs of few distinct labels a side, wherever they lie, summed over the dense grid of their ranks; else None.

    Each side is rank-coded (:func:`rank_codes`: a hash lookup per pair, no
    hash table of every pair key) and the counts summed by cell of the
    ranks' grid, when that grid is not much larger than the pairs.
    """
    if not (_few(truth) and _few(pred)):
        return None
    t_codes, t_labels = rank_codes(truth)
    p_codes, p_labels = rank_codes(pred)
    cells = len(t_labels) * len(p_labels)
    if cells > max(_HASH_MERGE, 4 * count.size):
        return None
    sums = sum_by(t_codes.astype(np.int64) * len(p_labels) + p_codes, count, cells)
    nonzero = np.flatnonzero(sums)
    return PairCounts(np.asarray(t_labels)[nonzero // len(p_labels)], np.asarray(p_labels)[nonzero % len(p_labels)],
                      sums[nonzero])


def _merge_integers(parts) -> Counts:
    """Merge integer-labelled parts: dense tables by addition, many pairs by hashing their keys."""
    size = sum(p.table.size if isinstance(p, DenseCounts) else p.count.size for p in parts)
    if size <= _HASH_MERGE or _dense_fits(parts):
        return merge_pairs(*parts)
    pairs = [p.to_pairs() for p in parts]
    truth = np.concatenate([p.truth for p in pairs])
    pred = np.concatenate([p.pred for p in pairs])
    count = np.concatenate([p.count for p in pairs])
    if count.size == 0:
        return PairCounts(truth, pred, count)
    few = _few_pairs(truth, pred, count)
    if few is not None:
        return few
    t_lo, t_hi, p_lo, p_hi = int(truth.min()), int(truth.max()), int(pred.min()), int(pred.max())
    width_p = p_hi - p_lo + 1
    if (t_hi - t_lo + 1) * width_p <= MAX_LABEL:
        keys, distinct = pd.factorize(pair_keys(truth, t_lo, width_p, pred, p_lo))
        distinct = np.asarray(distinct)
        return PairCounts(distinct // width_p + t_lo, distinct % width_p + p_lo,
                          sum_by(keys, count, distinct.size))
    t_codes, t_labels = pd.factorize(truth)
    p_codes, p_labels = pd.factorize(pred)
    pair = t_codes.astype(np.int64) * len(p_labels) + p_codes
    keys, distinct = pd.factorize(pair)
    distinct = np.asarray(distinct)
    return PairCounts(np.asarray(t_labels)[distinct // len(p_labels)], np.asarray(p_labels)[distinct % len(p_labels)],
                      sum_by(keys, count, distinct.size))


def merge_labelled(*parts: Counts) -> Counts:
    """:func:`~daskbicl.kernels.coclustering.contingency.merge_pairs` for parts that may carry label values.

    Parts counted as dense blocks over their own labels add up block by
    block (:func:`~daskbicl.engine.label_grids.merge_grids`).  Otherwise,
    sides whose labels are values (objects) are factorised jointly over the
    parts, merged as integer codes, and turned back into values.
    """
    grid = merge_grids(parts)
    if grid is not None:
        return grid
    parts = tuple(p.to_pairs() if isinstance(p, LabelledCounts) else p for p in parts)
    objects = {side: any(_is_object(p, side) for p in parts) for side in ("truth", "pred")}
    if not any(objects.values()):
        return _merge_integers(parts)
    pairs = [p.to_pairs() for p in parts]
    coded: dict[str, np.ndarray] = {}
    uniques: dict[str, np.ndarray] = {}
    for side in ("truth", "pred"):
        if objects[side]:
            allv = np.concatenate([as_object(getattr(p, side)) for p in pairs])
            coded[side], uniques[side] = _factorize(allv, side)
    out = []
    start = 0
    for p in pairs:
        stop = start + p.count.size
        t = coded["truth"][start:stop] if objects["truth"] else p.truth
        q = coded["pred"][start:stop] if objects["pred"] else p.pred
        out.append(PairCounts(t, q, p.count))
        start = stop
    merged = _merge_integers(out).to_pairs()  # (hashes or sums over ranks when the pairs are many)
    return PairCounts(
        _labels_of(merged.truth, uniques["truth"]) if objects["truth"] else merged.truth,
        _labels_of(merged.pred, uniques["pred"]) if objects["pred"] else merged.pred,
        merged.count,
    )


def _unassigned(labels: np.ndarray) -> np.ndarray:
    """Boolean mask of the unassigned marker (-1 or None) in a label array."""
    if labels.dtype == object:
        return pd.isna(labels)
    return labels < 0


def unassigned_count(pairs: Counts) -> tuple[int, int]:
    """How many objects are unassigned on the truth side and on the pred side."""
    if isinstance(pairs, LabelledCounts):
        return (int(pairs.table[_unassigned(pairs.truth_labels)].sum()),
                int(pairs.table[:, _unassigned(pairs.pred_labels)].sum()))
    if isinstance(pairs, DenseCounts):
        t = int(pairs.table[0].sum()) if pairs.truth_lo < 0 else 0
        p = int(pairs.table[:, 0].sum()) if pairs.pred_lo < 0 else 0
        return t, p
    t = int(pairs.count[_unassigned(pairs.truth)].sum(dtype=np.int64))
    p = int(pairs.count[_unassigned(pairs.pred)].sum(dtype=np.int64))
    return t, p


def _compact(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, distinct labels)``; sorted labels when they are comparable, the
    unassigned marker (None) last."""
    if labels.dtype != object:
        distinct, codes = np.unique(labels, return_inverse=True)
        return codes.astype(np.intp, copy=False), distinct
    try:
        codes, distinct = pd.factorize(labels, sort=True)
    except TypeError:  # labels of mixed types cannot be sorted: first-seen order
        codes, distinct = pd.factorize(labels)
    distinct = np.asarray(distinct, dtype=object)
    codes = codes.astype(np.intp, copy=False)
    if (codes < 0).any():
        codes = np.where(codes < 0, len(distinct), codes)
        distinct = np.append(distinct, np.array([None], dtype=object))
    return codes, distinct


def _table(pairs: Counts) -> Table:
    """``pairs.to_table()``; integer pairs are compacted by hashing (``pandas.factorize(sort=True)``,
    the same codes as ``np.unique``'s inverse, without sorting every pair)."""
    if isinstance(pairs, (DenseCounts, LabelledCounts)) or pairs.truth.dtype == object or pairs.pred.dtype == object:
        return pairs.to_table()
    rows, truth_labels = pd.factorize(pairs.truth, sort=True)
    cols, pred_labels = pd.factorize(pairs.pred, sort=True)
    return Table(rows.astype(np.intp, copy=False), cols.astype(np.intp, copy=False),
                 pairs.count.astype(np.int64, copy=False), np.asarray(truth_labels), np.asarray(pred_labels))


def to_table(pairs: Counts, policy: str = DEFAULT_POLICY,
             names: tuple[str, str] = ("truth labels", "pred labels")) -> Table:
    """The contingency :class:`Table` of merged counts, under the unassigned ``policy``.

    Examples
    --------
    >>> pc = count_labels(np.array([0, 0, -1, -1]), np.array(["a", "a", "b", None], dtype=object), ("t", "p"))
    >>> to_table(pc, "error", ("t", "p"))
    Traceback (most recent call last):
    ...
    daskbicl.errors.LabelError: t has 2 unassigned entries and p has 1 unassigned entry (NaN, None, pandas NA or a negative integer); pass unassigned="cluster" (one extra cluster) or unassigned="singleton" (a cluster each)
    >>> to_table(pc, "cluster").shape, to_table(pc, "singleton").shape
    ((2, 3), (3, 3))
    """
    policy = check_policy(policy)
    n_t, n_p = unassigned_count(pairs)
    if not (n_t or n_p):
        return _table(pairs)
    if policy == "error":
        parts = [f"{name} has {n:,} unassigned {'entry' if n == 1 else 'entries'}"
                 for name, n in zip(names, (n_t, n_p)) if n]
        raise LabelError(
            f"{' and '.join(parts)} (NaN, None, pandas NA or a negative integer); pass "
            'unassigned="cluster" (one extra cluster) or unassigned="singleton" (a cluster each)'
        )
    pairs = pairs.to_pairs()
    truth, pred, count = pairs.truth, pairs.pred, pairs.count
    if policy == "cluster":
        rows, truth_labels = _compact(truth)
        cols, pred_labels = _compact(pred)
        return Table(rows, cols, count.astype(np.int64, copy=False), truth_labels, pred_labels)
    # singleton: every unassigned object is a cluster of its own.  Pairs with an
    # unassigned side are repeated once per object (count 1 each), and each
    # repeated unassigned side gets a fresh label -1, -2, ... (never a label
    # of an assigned entry: those are non-negative or non-integer).
    t_un, p_un = _unassigned(truth), _unassigned(pred)
    single = t_un | p_un
    reps = np.where(single, count, 1)
    idx = np.repeat(np.arange(count.size), reps)
    count = np.where(single[idx], 1, count[idx]).astype(np.int64)
    sides = []
    for labels, un in ((truth, t_un), (pred, p_un)):
        labels, un = labels[idx], un[idx]
        n_fresh = int(un.sum())
        if not n_fresh:
            sides.append(_compact(labels))
            continue
        assigned_codes, distinct = _compact(labels[~un])
        codes = np.empty(labels.size, dtype=np.intp)
        codes[~un] = assigned_codes
        codes[un] = len(distinct) + np.arange(n_fresh)
        fresh = -np.arange(1, n_fresh + 1, dtype=np.int64)
        if distinct.dtype == object:
            fresh = fresh.astype(object)
        sides.append((codes, np.concatenate([distinct, fresh])))
    (rows, truth_labels), (cols, pred_labels) = sides
    return Table(rows, cols, count, truth_labels, pred_labels)
