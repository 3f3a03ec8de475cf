"""Per-axis information measures and accuracy (docs/measures/more.md), declared in the registry.

NMI and AMI per axis (scikit-learn's definitions and ``average_method``),
variation of information of the cell partitions, and the matching accuracy
behind CE.  All are finalized from the ``partition`` provider's two tables;
none is scored unless named (``Measure.default`` is False).
"""

from __future__ import annotations

import math

from .. import config
from ..kernels.coclustering import cocluster_scores, information_theory
from . import coclustering as _partition  # noqa: F401  (registers the partition provider first)
from .registry import Measure, OneOf, Param, register

AVERAGE = Param("arithmetic", OneOf(information_theory.AVERAGE_METHODS),
                "How the two entropies are averaged in the normaliser: 'arithmetic' (default, as "
                "scikit-learn), 'geometric', 'min' or 'max'.")

_SIDE = {"rows": ("row", "z", 0), "cols": ("column", "w", 1)}


def _axis(name: str) -> tuple[str, str, int]:
    return _SIDE[name.rsplit("_", 1)[1]]


for _name in ("nmi_rows", "nmi_cols"):
    _word, _sym, _i = _axis(_name)
    register(Measure(
        name=_name,
        summary=f"Normalized mutual information of the {_word} partitions, MI / avg(H, H').",
        family="partition", provider="partition",
        finalize=lambda t, average_method, _i=_i: information_theory.nmi(t[_i], average_method),
        symmetric=True, bounds=(0.0, 1.0), perfect=1.0, params={"average_method": AVERAGE}, default=False,
        doc=rf"""
.. math::
    \mathrm{{NMI}}({_sym}, {_sym}') = \frac{{\mathrm{{MI}}({_sym}, {_sym}')}}{{\mathrm{{avg}}(H({_sym}), H({_sym}'))}}

with natural logarithms and the average chosen by ``average_method``
(scikit-learn's ``normalized_mutual_info_score``; ENMI is the sum of the
row and column NMIs with the ``max`` average).  1 when both sides have a
single cluster, 0 when MI is 0.  Symmetric; costs O(non-zero cells).

Examples
--------
>>> import daskbicl
>>> daskbicl.{_name}(([0, 0, 1, 1], [0, 0, 1, 1]), ([1, 1, 0, 0], [1, 1, 0, 0]))
1.0
""",
    ))

for _name in ("ami_rows", "ami_cols"):
    _word, _sym, _i = _axis(_name)
    register(Measure(
        name=_name,
        summary=f"Adjusted mutual information of the {_word} partitions (~0 = random, 1 = identical).",
        family="partition", provider="partition",
        finalize=lambda t, average_method, _i=_i: information_theory.ami(t[_i], average_method),
        symmetric=True, bounds=(-1.0, 1.0), perfect=1.0, params={"average_method": AVERAGE}, default=False,
        doc=rf"""
.. math::
    \mathrm{{AMI}} = \frac{{\mathrm{{MI}} - E[\mathrm{{MI}}]}}{{\mathrm{{avg}}(H({_sym}), H({_sym}')) - E[\mathrm{{MI}}]}}

Vinh, Epps & Bailey (2010), as scikit-learn's ``adjusted_mutual_info_score``.
E[MI] is the expectation under the permutation model (margins fixed), a sum
of hypergeometric terms; daskbicl sums each hypergeometric distribution
only where its mass is not negligible (a Bernstein bound on the tails), with
an absolute error below 1e-12 nats, so 5·10^7 labels with 1000 clusters
cost well under a second once the table exists.  Conventions: 1 when both
sides have a single cluster, 0 when only one has, 1 when every permutation
has the same MI (the denominator is 0).

There is no co-clustering AMI: the expectation of the cell MI under
random co-clusterings with fixed margins has no published definition (the
cell table is not a random table with fixed margins, since its cells move
together in blocks).

Examples
--------
>>> import daskbicl
>>> daskbicl.{_name}(([0, 0, 1, 1], [0, 0, 1, 1]), ([1, 1, 0, 0], [1, 1, 0, 0]))
1.0
""",
    ))

register(Measure(
    name="vi",
    summary="Variation of information of the cell partitions, VI(rows) + VI(cols), in nats (0 = identical).",
    family="partition", provider="partition",
    finalize=lambda t: information_theory.vi(*t),
    symmetric=True, bounds=(0.0, math.inf), perfect=0.0, default=False,
    doc=r"""
.. math::
    \mathrm{VI} = H(z) + H(z') - 2\,\mathrm{MI}(z, z') + H(w) + H(w') - 2\,\mathrm{MI}(w, w')

Meilă (2007).  The variation of information of the partitions of the
I·J cells: entropies and mutual information of the cell partition are
sums of the row and the column ones, so the cell VI is the row VI plus the
column VI.  A metric; natural logarithms; symmetric.

Examples
--------
>>> import daskbicl
>>> daskbicl.vi(([0, 0, 1, 1], [0]), ([1, 1, 0, 0], [0]))
0.0
""",
))


def _dense_limit() -> int:
    return int(config.get("dense_limit"))


for _name in ("accuracy_rows", "accuracy_cols"):
    _word, _sym, _i = _axis(_name)
    register(Measure(
        name=_name,
        summary=f"Share of {_word}s on the best one-to-one matching of clusters (1 − d of CE).",
        family="partition", provider="partition",
        finalize=lambda t, _i=_i: cocluster_scores.accuracy(t[_i], dense_limit=_dense_limit()),
        symmetric=True, bounds=(0.0, 1.0), perfect=1.0, default=False,
        doc=rf"""
.. math::
    \mathrm{{acc}} = \frac{{1}}{{n}} \max_\sigma \sum_h n^{{{_sym}{_sym}'}}_{{h\sigma(h)}}

the "Hungarian accuracy" of clustering papers, equal to 1 − d of CE's
definition for this axis (the matching of :func:`daskbicl.ce`).

Examples
--------
>>> import daskbicl
>>> daskbicl.{_name}(([0, 0, 1, 1], [0, 0, 1, 1]), ([0, 0, 1, 0], [0, 0, 1, 0]))
0.75
""",
    ))

register(Measure(
    name="accuracy",
    summary="1 − CE: share of cells on the best matchings of row and column clusters.",
    family="partition", provider="partition",
    finalize=lambda t: cocluster_scores.cell_accuracy(*t, dense_limit=_dense_limit()),
    symmetric=True, bounds=(0.0, 1.0), perfect=1.0, default=False,
    doc=r"""
.. math::
    \mathrm{acc} = 1 - \mathrm{CE} = (1 - d_r)(1 - d_c)

the product of the row and column accuracies, computed exactly from the
matched counts.

Examples
--------
>>> import daskbicl
>>> daskbicl.accuracy(([0, 0, 1, 1], [0, 1]), ([0, 0, 1, 0], [0, 1]))
0.75
""",
))
