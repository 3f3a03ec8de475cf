"""The weighted indices of the tradeoff space by name: the records users name (docs/measures/tradeoff.md).

A user names an index (``index="jaccard"``, ``daskbicl tradeoff --index``)
as they name a measure, so the names live here, in the registry layer, and
every interface — the CLI's choices and default, the figures' display names,
the request checks, the tradeoff functions — reads them from here.  Each
:class:`WeightedIndex` record pairs a name and a display name with the
nameless maths of :mod:`daskbicl.kernels.tradeoff.indices` (numpy only: the
formula, the pieces of its envelope, its closed-form integrals).

Not imported by ``import daskbicl``: it is loaded with the tradeoff
functions, the figures or the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import MeasureError
from ..kernels.tradeoff.indices import FMEASURE, FOLKE, JACCARD, KULCZYNSKI, IndexFormula, index_values

__all__ = ["DEFAULT_INDEX", "INDEX_RECORDS", "INDICES", "WeightedIndex", "canonical_index", "get_index",
           "weighted_index"]


@dataclass(frozen=True)
class WeightedIndex:
    """One weighted index as users name it.

    Attributes
    ----------
    name : str
        What ``index=`` and ``--index`` take (``"fmeasure"``).
    label : str
        Display name in figures (``"F-measure"``).
    formula : daskbicl.kernels.tradeoff.indices.IndexFormula
        The maths: its value, envelope pieces and integrals.
    """

    name: str
    label: str
    formula: IndexFormula


#: The weighted indices by name, in the order the CLI and the docs list them.
INDEX_RECORDS: dict[str, WeightedIndex] = {x.name: x for x in (
    WeightedIndex("kulczynski", "Kulczynski", KULCZYNSKI),
    WeightedIndex("fmeasure", "F-measure", FMEASURE),
    WeightedIndex("folke", "Folke", FOLKE),
    WeightedIndex("jaccard", "Jaccard", JACCARD),
)}
INDICES: tuple[str, ...] = tuple(INDEX_RECORDS)
#: The index used when none is named (the tradeoff functions, figures and ``daskbicl tradeoff --index``).
DEFAULT_INDEX: str = INDEX_RECORDS["fmeasure"].name


def get_index(index) -> WeightedIndex:
    """The record of ``index`` (a record, or a name: case and surrounding spaces ignored, as for measures).

    An unknown name is a :class:`~daskbicl.errors.MeasureError` that lists the valid ones.

    Examples
    --------
    >>> get_index(" Jaccard ").label, get_index("FMEASURE").name
    ('Jaccard', 'fmeasure')
    """
    if isinstance(index, WeightedIndex):
        return index
    try:
        return INDEX_RECORDS[index.strip().lower() if isinstance(index, str) else index]
    except (KeyError, TypeError):
        raise MeasureError(f"unknown index {index!r}; choose one of {', '.join(INDICES)}") from None


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


def weighted_index(pre, rec, lam, index: str = DEFAULT_INDEX):
    """Weighted Kulczynski, F-measure, Folke or Jaccard index (docs/measures/tradeoff.md).

    .. math::

        K_\\lambda = (1-\\lambda)\\,pre + \\lambda\\,rec, \\qquad
        F_\\lambda = \\frac{pre\\,rec}{\\lambda\\,pre + (1-\\lambda)\\,rec}, \\qquad
        Fo_\\lambda = pre^{1-\\lambda}\\,rec^{\\lambda},

        J_\\lambda = \\frac{pre\\,rec}{w(\\lambda)\\,pre + w(1-\\lambda)\\,rec
        - v(\\lambda)\\,pre\\,rec}, \\quad w(t) = \\min(2t, 1), \\;
        v(\\lambda) = 1 - |1 - 2\\lambda|.

    Every index is ``pre`` at λ = 0, ``rec`` at λ = 1 and its unweighted
    form at λ = 0.5.  A 0/0 inside (0, 1) (F-measure or Jaccard with
    ``pre = 0`` or ``rec = 0``) gives 0, so ``pre = rec = 0`` gives 0 for
    every λ.  The Folke exponents follow the erratum (docs/measures/tradeoff.md).

    Parameters
    ----------
    pre, rec, lam : array_like of float in [0, 1]
        Broadcast together.
    index : {"kulczynski", "fmeasure", "folke", "jaccard"}
        Case and surrounding spaces are ignored.

    Returns
    -------
    numpy.ndarray or numpy.float64
        The broadcast shape (a scalar for scalar inputs).

    Examples
    --------
    The check values (pre = 0.5, rec = 0.9, λ = 0.2):

    >>> [round(float(weighted_index(0.5, 0.9, 0.2, i)), 3) for i in INDICES]
    [0.58, 0.549, 0.562, 0.489]
    >>> weighted_index([0.5, 0.5], 0.9, [0.0, 1.0], "jaccard").tolist()
    [0.5, 0.9]
    """
    return index_values(pre, rec, lam, get_index(index).formula)
