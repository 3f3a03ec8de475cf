"""Per-axis partition measures the field reports (docs/measures/field.md), declared in the registry.

Homogeneity, completeness and V-measure (scikit-learn), normalised
clustering accuracy and the pair sets index (genieclust), reduced mutual
information and element-centric similarity (clusim), each on the rows and
on the columns of two co-clusterings.  All are finalized from the
``partition`` provider's two contingency tables and scored only when named.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .. import config
from ..kernels.coclustering import element_centric, homogeneity, matching_accuracy, reduced_mi
from . import coclustering as _partition  # noqa: F401  (registers the partition provider first)
from .registry import Interval, Measure, Param, register

#: The same name and constraint as the F-measure's beta (one parameter name, one constraint): beta > 0.
BETA = Param(1.0, Interval(0, math.inf, closed="neither"),
             "Weight of completeness against homogeneity in the V-measure: V = (1+beta)hc/(beta h + c) "
             "(1: their harmonic mean; towards 0: homogeneity alone).")

_AXES = (("rows", "row", "z", 0), ("cols", "column", "w", 1))


def _dense_limit() -> int:
    return int(config.get("dense_limit"))


def _example(name: str, value: str, truth="[0, 0, 1, 1]", pred="[0, 0, 1, 2]") -> str:
    t, p = (f"({truth}, [0])", f"({pred}, [0])") if name.endswith("_rows") else (f"([0], {truth})", f"([0], {pred})")
    return f"""
Examples
--------
>>> import daskbicl
>>> round(daskbicl.{name}({t}, {p}), 6)
{value}
"""


def _axis_measures(stem: str, summary: str, kernel: Callable, *, symmetric: bool, bounds, perfect: float,
                   doc: str, example: tuple, params=None, takes_limit: bool = False) -> None:
    """Register ``{stem}_rows`` and ``{stem}_cols``: ``kernel`` on the row or the column table."""
    for suffix, word, sym, i in _AXES:
        name = f"{stem}_{suffix}"
        if takes_limit:
            def finalize(t, _i=i):
                return kernel(t[_i], dense_limit=_dense_limit())
        elif params:
            def finalize(t, beta, _i=i):
                return kernel(t[_i], beta)
        else:
            def finalize(t, _i=i):
                return kernel(t[_i])
        register(Measure(
            name=name, summary=summary.format(word=word), family="partition", provider="partition",
            finalize=finalize, symmetric=symmetric, bounds=bounds, perfect=perfect, params=params or {},
            default=False, doc=doc.replace("{z}", sym) + _example(name, *example),
        ))


_axis_measures(
    "homogeneity", "Homogeneity of the {word} partitions, MI / H(truth): each pred cluster within one class.",
    homogeneity.homogeneity, symmetric=False, bounds=(0.0, 1.0), perfect=1.0, example=("1.0",),
    doc=r"""
.. math::
    h = 1 - \frac{H({z} \mid {z}')}{H({z})} = \frac{\mathrm{MI}({z}, {z}')}{H({z})}

Rosenberg & Hirschberg (2007), V-Measure: a conditional entropy-based
external cluster evaluation measure, EMNLP; as scikit-learn's
``homogeneity_score``.  1 when truth has a single cluster.  Not symmetric:
``h(truth, pred)`` is the completeness of ``(pred, truth)``.
""")

_axis_measures(
    "completeness", "Completeness of the {word} partitions, MI / H(pred): each class within one pred cluster.",
    homogeneity.completeness, symmetric=False, bounds=(0.0, 1.0), perfect=1.0, example=("0.666667",),
    doc=r"""
.. math::
    c = 1 - \frac{H({z}' \mid {z})}{H({z}')} = \frac{\mathrm{MI}({z}, {z}')}{H({z}')}

Rosenberg & Hirschberg (2007); as scikit-learn's ``completeness_score``.
1 when pred has a single cluster.  Not symmetric.
""")

_axis_measures(
    "v_measure", "V-measure of the {word} partitions, (1+beta)hc/(beta h + c) of homogeneity and completeness.",
    homogeneity.v_measure, symmetric=True, bounds=(0.0, 1.0), perfect=1.0, example=("0.8",),
    params={"beta": BETA},
    doc=r"""
.. math::
    V_\beta = \frac{(1 + \beta)\, h\, c}{\beta h + c}

Rosenberg & Hirschberg (2007); as scikit-learn's ``v_measure_score``
(with the default ``beta=1`` it equals the NMI with the arithmetic
average, and is symmetric; another ``beta`` weighs the two sides
differently, and swapping truth and pred then changes the value).  0 when
``h + c = 0``.
""")

_axis_measures(
    "nca", "Normalised clustering accuracy of the {word} partitions (Gagolewski 2022; 1 = identical).",
    matching_accuracy.nca, symmetric=False, bounds=(-1.0, 1.0), perfect=1.0, example=("0.5",),
    takes_limit=True,
    doc=r"""
.. math::
    \mathrm{NCA} = \frac{\max_\sigma \frac1K \sum_h n^{{z}{z}'}_{h\sigma(h)} / a_h - 1/K}{1 - 1/K}

the mean recall of the K truth clusters under the best one-to-one matching
(pred padded with empty clusters), above the 1/K of a uniform assignment.
Gagolewski (2022), Normalised clustering accuracy: an asymmetric external
cluster validity measure; as genieclust's ``normalized_clustering_accuracy``
(which accepts equal cluster counts only).  Not symmetric.  One truth
cluster: 1 if pred has one too, else 0.
""")

_axis_measures(
    "psi", "Pair sets index of the {word} partitions (Rezaei & Fränti 2016; 1 = identical, 0 = chance).",
    matching_accuracy.psi, symmetric=True, bounds=(0.0, 1.0), perfect=1.0, example=("0.333333",),
    takes_limit=True,
    doc=r"""
.. math::
    \mathrm{PSI} = \frac{S - E}{\max(K, K') - E},\quad
    S = \max_\sigma \sum_h \frac{n^{{z}{z}'}_{h\sigma(h)}}{\max(a_h, b_{\sigma(h)})}

with ``E`` the expected ``S`` (sizes sorted in decreasing order, Eq. 18 of
Rezaei & Fränti 2016, Set matching measures for external cluster
validity, IEEE TKDE); 0 when ``S < E``; 1 when both sides have one
cluster.  As genieclust's ``pair_sets_index``.  Symmetric.
""")

_axis_measures(
    "rmi", "Reduced mutual information of the {word} partitions (Newman et al. 2020), nats per element.",
    reduced_mi.rmi, symmetric=True, bounds=(-math.inf, math.inf), perfect=math.nan, example=("0.120934",),
    doc=r"""
.. math::
    \mathrm{RMI} = \frac1n\Big[\log\frac{n!\,\prod n^{{z}{z}'}_{hh'}!}{\prod a_h!\,\prod b_{h'}!} - \log\Omega(a, b)\Big]

the exact mutual information minus the information needed to send the
contingency table, ``log Ω(a, b)`` (tables with these margins), estimated as
in Newman, Cantwell & Young (2020), Improved mutual information measure for
clustering, classification, and community detection, Phys. Rev. E 101;
as clusim's ``rmi`` with ``logbase=e``.  Natural logarithms.
""")

_axis_measures(
    "nrmi", "Normalised reduced mutual information of the {word} partitions (1 = identical, ~0 = independent).",
    reduced_mi.normalized_rmi, symmetric=True, bounds=(-math.inf, 1.0), perfect=1.0, example=("0.638664",),
    doc=r"""
.. math::
    \mathrm{NRMI} = \frac{2\,\mathrm{RMI}({z}, {z}')}{\mathrm{RMI}({z}, {z}) + \mathrm{RMI}({z}', {z}')}

as clusim's ``rmi(..., norm_type="normalized")``.  1 when both sides have a
single cluster (clusim returns nan there: 0/0).
""")

_axis_measures(
    "ecs", "Element-centric similarity of the {word} partitions (Gates et al. 2019; 1 = identical).",
    element_centric.element_centric_similarity, symmetric=True, bounds=(0.0, 1.0), perfect=1.0,
    example=("0.75",),
    doc=r"""
.. math::
    \mathrm{ECS} = \frac1n \sum_{hh'} \frac{(n^{{z}{z}'}_{hh'})^2}{\max(a_h, b_{h'})}

the mean over elements of ``1 − ‖p − p'‖₁/(2α)``, ``p`` an element's
personalised-PageRank affinities in the cluster graph; for hard partitions
this closed form holds and α (0.9 in clusim's ``element_sim``) cancels.
Gates, Wood, Hetrick & Ahn (2019), Element-centric clustering comparison
unifies overlaps and hierarchy, Scientific Reports 9.
""")
