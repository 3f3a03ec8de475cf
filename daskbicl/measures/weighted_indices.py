"""The weighted indices of the tradeoff space as the interfaces read them (docs/measures/tradeoff.md).

A user names an index (``index="jaccard"``, ``daskbicl tradeoff --index``)
as they name a measure, so the interfaces — the CLI's choices and default,
the figures, the request checks, the tradeoff functions — read the index
names from here, the registry layer, never from the maths module.  The
records themselves (each index's formula, the pieces of its envelope, its
closed-form integrals) are :mod:`daskbicl.kernels.tradeoff.indices`
(numpy only); this module is the one that imports them for the interfaces.
"""

from __future__ import annotations

from ..kernels.tradeoff.indices import DEFAULT_INDEX, INDEX_RECORDS, INDICES, WeightedIndex, get_index

__all__ = ["DEFAULT_INDEX", "INDEX_RECORDS", "INDICES", "WeightedIndex", "canonical_index", "get_index"]


def canonical_index(value) -> str:
    """The name of the index ``value`` names, case and surrounding spaces ignored (else :class:`~daskbicl.errors.MeasureError`).

    Examples
    --------
    >>> canonical_index(" Jaccard ") == get_index(canonical_index("jaccard")).name
    True
    """
    if isinstance(value, str):
        value = value.strip().lower()
    return get_index(value).name
