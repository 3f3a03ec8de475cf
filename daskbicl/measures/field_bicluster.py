"""Measures of overlapping covers and bicluster matches the field reports (docs/measures/overlapping.md).

* ``omega_rows`` / ``omega_cols`` and ``onmi_rows`` / ``onmi_cols`` compare
  the row (column) covers of truth and pred, from the ``cover`` provider
  (:mod:`daskbicl.engine.membership_pass`: joint membership signatures
  counted chunk by chunk, then small tables on the cluster);
* ``liu_wang`` reads the K x L shared-row and shared-column tables of the
  ``bicluster`` provider.
"""

from __future__ import annotations

import math

from ..engine.membership_pass import CoverTables, cell_counts, cover_counts
from ..engine.micro_pass import max_work
from ..engine.provider_graph import AXES, Read
from ..errors import InputError
from ..kernels.bicluster.cell_pairs import csi_from_histograms
from ..kernels.bicluster.liu_wang import liu_wang_score
from ..kernels.bicluster.mask_counting import BiclusterTables
from ..kernels.bicluster.omega_index import omega_from_histogram
from ..kernels.bicluster.overlapping_nmi import VARIANTS, onmi
from .registry import Measure, OneOf, Param, Provider, register, register_provider

__all__: list[str] = []


def _cover_reads(counts=frozenset(), pairs=frozenset(), cells=False, limit=math.inf, **_) -> tuple[Read, ...]:
    """The covers of the axes in ``counts | pairs`` (each finished by its own task), then the cells' row and column
    memberships when ``cells`` is asked for."""
    axes = frozenset(counts) | frozenset(pairs)
    unknown = axes - set(AXES)
    if unknown:
        raise ValueError(f"unknown axis {sorted(unknown)}; expected some of {sorted(AXES)}")
    covers = tuple(Read("cover", axis, cover_counts, (axis in pairs, limit)) for axis in sorted(axes))
    return covers + ((Read("memberships", "rows"), Read("memberships", "cols")) if cells else ())


def _cover_tables(*tables, counts=frozenset(), pairs=frozenset(), cells=False, limit=math.inf) -> CoverTables:
    """The :class:`CoverTables` from the tables of :func:`_cover_reads`, in its order."""
    axes = sorted(frozenset(counts) | frozenset(pairs))
    per_axis = dict(zip(axes, tables))
    cell = cell_counts(tables[len(axes)], tables[len(axes) + 1], limit) if cells else None
    return CoverTables(per_axis.get("rows"), per_axis.get("cols"), cell)


register_provider(
    Provider(
        name="cover",
        kinds=("partition", "biclustering"),
        tables="cover",
        reads=_cover_reads,
        finalize=_cover_tables,
        bind=lambda: {"limit": max_work()},
        description="row and column covers: joint membership signatures (one chunked pass per axis), "
        "then cluster sizes, shared items and pairs of items by clusters shared; options counts, pairs: "
        "the axes the selected measures read; cells: cells and pairs of cells by biclusters shared",
    )
)

_AXIS_WORD = {"rows": "row", "cols": "column"}

_COVERS = """\
The row cover of a biclustering is the row set of each of its biclusters
(a row may be in several, or in none); that of a co-clustering is its row
clusters, each once.  Every row of the matrix is an item, rows in no
cluster included (they share no cluster with any other row)."""

_REF_OMEGA = "Collins & Dent (1988), Omega: a general formulation of the Rand index of cluster recovery " \
             "suitable for non-disjoint solutions, Multivariate Behavioral Research 23(2); clusim's omega_index."
_REF_ONMI = ("Lancichinetti, Fortunato & Kertész (2009), New J. Phys. 11 033015; McDaid, Greene & Hurley "
             "(2011), arXiv:1110.2515; cdlib's overlapping_normalized_mutual_information_LFK / _MGH.")

VARIANT = Param("lfk", OneOf(VARIANTS),
                "'lfk': Lancichinetti-Fortunato-Kertész, normalised cluster by cluster; 'mgh': McDaid et al.'s "
                "I / max(H(X), H(Y)); 'mgh_lfk': McDaid et al.'s sum-normalised LFK form.")


def _axis(tables: CoverTables, axis: str):
    counts = getattr(tables, axis)
    if counts is None:
        raise InputError(f"the {axis} cover was not counted")
    return counts


def _omega(tables: CoverTables, axis: str) -> float:
    counts = _axis(tables, axis)
    if counts.n_items < 2:  # no pair to tell the covers apart: 1, the adjusted Rand index's convention
        return 1.0
    return omega_from_histogram(counts.pairs)


def _onmi(tables: CoverTables, axis: str, variant: str = "lfk") -> float:
    counts = _axis(tables, axis)
    return onmi(counts.shared, counts.truth_sizes, counts.pred_sizes, counts.n_items, variant)


def _omega_measure(axis: str) -> Measure:
    word = _AXIS_WORD[axis]
    return Measure(
        name=f"omega_{axis}",
        summary=f"Omega index of the {word} covers (Collins & Dent): pairs of {word}s sharing as many "
        "clusters on both sides, chance-corrected.",
        family="bicluster", provider="cover", default=False,
        finalize=lambda t, _a=axis: _omega(t, _a),
        symmetric=True, bounds=(-math.inf, 1.0), perfect=1.0, empty_pred=0.0,
        provider_options={"counts": frozenset({axis}), "pairs": frozenset({axis})},
        doc=f"""
For a pair of {word}s, a = the truth clusters both are in and b = the pred
clusters both are in; over the M = n(n-1)/2 pairs,

.. math::
    \\omega = \\frac{{N_{{a=b}} - E}}{{M - E}}, \\qquad
    E = \\frac{{1}}{{M}} \\sum_k N^{{T}}_{{k}} N^{{P}}_{{k}}

with N^T_k (N^P_k) the pairs sharing exactly k truth (pred) clusters.
{_COVERS}  Counted from the distinct joint membership signatures and the
number of {word}s with each, never pair by pair (docs/measures/overlapping.md);
exact integers, one rounding.  1 when every pair shares the same count on
both sides and the expected agreement is M (0/0); an input with fewer than
two {word}s is an error; a pred with no bicluster scores 0.

Reference: {_REF_OMEGA}

Examples
--------
>>> import daskbicl
>>> truth = daskbicl.biclustering([[1, 1, 0, 0], [0, 1, 1, 1]], [[1], [1]])
>>> round(daskbicl.omega_{axis}(truth, truth), 12)
1.0
""")


def _onmi_measure(axis: str) -> Measure:
    word = _AXIS_WORD[axis]
    return Measure(
        name=f"onmi_{axis}",
        summary=f"Overlapping NMI of the {word} covers (Lancichinetti et al.; McDaid et al. with variant='mgh').",
        family="bicluster", provider="cover", default=False,
        finalize=lambda t, variant, _a=axis: _onmi(t, _a, variant),
        symmetric=True, bounds=(0.0, 1.0), perfect=1.0, empty_pred=0.0,
        params={"variant": VARIANT},
        provider_options={"counts": frozenset({axis})},
        doc=f"""
Each cluster is a binary variable over the n {word}s.  With h(p) = -p log2 p
and the frequencies p11, p10, p01, p00 of a truth cluster X_k and a pred
cluster Y_l, H(X_k|Y_l) = h(p11)+h(p10)+h(p01)+h(p00) - H(Y_l) is admitted
when h(p11)+h(p00) > h(p10)+h(p01); H(X_k|Y) is the least admitted value
(H(X_k) if none).  Default (``variant="lfk"``):

.. math::
    \\mathrm{{ONMI}} = 1 - \\tfrac12 \\Big( \\frac{{1}}{{K}} \\sum_k \\frac{{H(X_k|Y)}}{{H(X_k)}}
    + \\frac{{1}}{{L}} \\sum_l \\frac{{H(Y_l|X)}}{{H(Y_l)}} \\Big)

``variant="mgh"``: I / max(H(X), H(Y)) with sums over clusters and
I = (H(X) - H(X|Y) + H(Y) - H(Y|X))/2; ``"mgh_lfk"``: 1 - (H(X|Y)/H(X) +
H(Y|X)/H(Y))/2.  {_COVERS}  Computed from the cluster sizes and the K x L
table of shared {word}s (O(K·L)).  Two covers holding the same clusters
score 1; a ratio with zero entropy below it counts 1; a pred with no
bicluster scores 0.

Reference: {_REF_ONMI}

Examples
--------
>>> import daskbicl
>>> truth = daskbicl.biclustering([[1, 1, 0, 0], [0, 0, 1, 1]], [[1], [1]])
>>> daskbicl.onmi_{axis}(truth, truth)
1.0
""")


def _cells(tables: CoverTables):
    if tables.cells is None:
        raise InputError("the cells were not counted")
    return tables.cells


_CELL_COST = """Cells are counted through their memberships: a cell lies in the
biclusters its row and its column share, so the distinct row signatures
are intersected with the distinct column signatures (the work is their
product) and pairs of cells are counted from those classes as for rows
(docs/measures/overlapping.md).  Beyond the dask config ``daskbicl.max_work``
the measure raises :class:`~daskbicl.errors.TooLargeError` before the work;
pairs of cells are exact int64 counts up to 4e9 cells (larger matrices are
refused with the same error).  Each block of a co-clustering is a bicluster
here."""


register(Measure(
    name="omega",
    summary="Omega index on cells: pairs of cells sharing as many biclusters on both sides, chance-corrected.",
    family="bicluster", provider="cover", default=False,
    finalize=lambda t: 1.0 if _cells(t).n_cells < 2 else omega_from_histogram(_cells(t).pairs),
    symmetric=True, bounds=(-math.inf, 1.0), perfect=1.0, empty_pred=0.0,
    provider_options={"counts": frozenset(), "cells": True},
    doc=f"""
The omega index of ``omega_rows`` with cells as the items and biclusters as
the clusters: for a pair of cells, a and b are the truth and pred biclusters
containing both,

.. math::
    \\omega = \\frac{{N_{{a=b}} - E}}{{M - E}}, \\qquad
    E = \\frac{{1}}{{M}} \\sum_k N^{{T}}_{{k}} N^{{P}}_{{k}}

over the M = |D|(|D|-1)/2 pairs of cells.  {_CELL_COST}  1 when the
expected agreement is M; a pred with no bicluster scores 0.

Reference: {_REF_OMEGA}

Examples
--------
>>> import daskbicl
>>> truth = daskbicl.biclustering([[1, 1, 0], [0, 1, 1]], [[1, 0], [1, 1]])
>>> daskbicl.omega(truth, truth)
1.0
"""))

register(Measure(
    name="csi",
    summary="Campello soft index on cells (biclustlib's csi): agreement of the cell co-association counts.",
    family="bicluster", provider="cover", default=False,
    finalize=lambda t: csi_from_histograms(_cells(t).pairs, _cells(t).cells),
    symmetric=True, bounds=(0.0, 1.0), perfect=1.0,
    provider_options={"counts": frozenset(), "cells": True},
    doc=f"""
Each biclustering is read as a soft clustering of the cells: one cluster
per bicluster and one singleton per cell no bicluster covers (Horta &
Campello 2014).  With a, b the truth and pred biclusters a pair of cells
shares and v, u = max(1, number of truth / pred biclusters containing a cell),

.. math::
    A = \\sum_{{x<y}} \\min(a, b) + \\sum_x \\min(u - 1, v - 1), \\quad
    D = \\sum_{{x<y}} |a - b| + \\sum_x |u - v|, \\quad
    \\mathrm{{CSI}} = \\frac{{A}}{{A + D}},

as biclustlib's ``evaluation/csi.py`` computes it.  Exact integers, one
rounding; 1 when D = 0 (no disagreement; biclustlib divides 0 by 0 there).
{_CELL_COST}  A pred with no bicluster is refused (pass at least one bicluster).

Reference: Campello (2010), Generalized external indexes for comparing data
partitions with overlapping categories, Pattern Recognition Letters 31(9);
Horta & Campello (2014), IEEE/ACM TCBB 11(5); biclustlib (Padilha).

Examples
--------
>>> import daskbicl
>>> truth = daskbicl.biclustering([[1, 1, 0], [0, 1, 1]], [[1, 0], [1, 1]])
>>> daskbicl.csi(truth, truth)
1.0
"""))


def _liu_wang(tables: BiclusterTables) -> float:
    r, c = tables.rows, tables.cols
    return liu_wang_score(r.shared, c.shared, r.truth_sizes, c.truth_sizes, r.pred_sizes, c.pred_sizes)


for _axis_name in ("rows", "cols"):
    register(_omega_measure(_axis_name))
    register(_onmi_measure(_axis_name))

register(Measure(
    name="liu_wang",
    summary="Liu–Wang match score: mean over pred biclusters of the best pooled row-and-column Jaccard.",
    family="bicluster", provider="bicluster", default=False,
    finalize=_liu_wang, symmetric=False, bounds=(0.0, 1.0), perfect=1.0, empty_pred=0.0,
    doc="""
.. math::
    \\mathrm{LW} = \\frac{1}{L} \\sum_{l} \\max_k
    \\frac{|E_k \\cap E'_l| + |F_k \\cap F'_l|}{|E_k \\cup E'_l| + |F_k \\cup F'_l|}

over the L pred biclusters X_l = E'_l × F'_l and the truth biclusters
B_k = E_k × F_k (rows and columns pooled in one Jaccard index), as
biclustlib's ``evaluation/liu_wang.py`` computes it: the mean runs over
*pred* biclusters.  From the K x L shared-row and shared-column tables.
A pred with no bicluster scores 0.

Reference: Liu & Wang (2007), Computing the maximum similarity bi-clusters of
gene expression data, Bioinformatics 23(1); Horta & Campello (2014), IEEE/ACM
TCBB 11(5).

Examples
--------
>>> import daskbicl
>>> truth = daskbicl.biclustering([[1, 1, 1, 0]], [[1, 0]])
>>> pred = daskbicl.biclustering([[0, 1, 1, 0]], [[1, 1]])
>>> daskbicl.liu_wang(truth, pred)   # (2 + 1) / (3 + 2)
0.6
"""))
