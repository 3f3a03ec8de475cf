"""Co-clustering measures (docs/measures/coclustering.md), declared in the registry.

All are finalized from the ``partition`` provider: the row table n^{zz'} and
the column table n^{ww'} counted in one chunked pass per axis.
"""

from __future__ import annotations

import math

from .. import config
from ..kernels.coclustering import cocluster_scores
from .registry import Measure, OneOf, Param, Provider, register, register_provider

register_provider(
    Provider(
        name="partition",
        kinds=("partition",),
        description="row and column contingency tables (one chunked pass per axis)",
        from_tables=lambda rows, cols: (rows, cols),
    )
)


def _dense_limit() -> int:
    """Tables above this many cells are matched with the sparse solver (config ``daskbicl.dense_limit``)."""
    return int(config.get("dense_limit"))


register(
    Measure(
        name="cari",
        summary="Co-clustering adjusted Rand index: ARI of the I·J cell labels (1 = identical, ~0 = random).",
        family="partition",
        provider="partition",
        finalize=lambda t: cocluster_scores.cari(*t),
        symmetric=True,
        bounds=(-1.0, 1.0),
        perfect=1.0,
        doc=r"""
.. math::
    \mathrm{CARI} = \mathrm{ARI}(n^{zz'} \otimes n^{ww'})

computed exactly from the two tables (the Kronecker product is never built).

Reference: Robert, Vasseur & Brault (2021), Comparing high-dimensional partitions with
the Co-clustering Adjusted Rand Index, Journal of Classification 38:158-186.

Examples
--------
>>> import numpy as np, daskbicl
>>> truth = daskbicl.partition([0, 0, 1, 1], [0, 1, 1])
>>> pred = daskbicl.partition([5, 5, 7, 7], [0, 0, 1])
>>> round(daskbicl.cari(truth, pred), 6)
0.274725
""",
    )
)

register(
    Measure(
        name="ari_rows",
        summary="Adjusted Rand index of the row partitions alone.",
        family="partition",
        provider="partition",
        finalize=lambda t: cocluster_scores.ari(t[0]),
        symmetric=True,
        bounds=(-1.0, 1.0),
        perfect=1.0,
        doc=r"""
Hubert & Arabie (1985) ARI of ``z`` and ``z'`` from n^{zz'}.

Examples
--------
>>> import daskbicl
>>> daskbicl.ari_rows(([0, 0, 1, 1], [0]), ([1, 1, 0, 0], [0]))
1.0
""",
    )
)

register(
    Measure(
        name="ari_cols",
        summary="Adjusted Rand index of the column partitions alone.",
        family="partition",
        provider="partition",
        finalize=lambda t: cocluster_scores.ari(t[1]),
        symmetric=True,
        bounds=(-1.0, 1.0),
        perfect=1.0,
        doc=r"""
Hubert & Arabie (1985) ARI of ``w`` and ``w'`` from n^{ww'}.

Examples
--------
>>> import daskbicl
>>> round(daskbicl.ari_cols(([0], [0, 0, 1, 1]), ([0], [0, 1, 0, 1])), 6)
-0.5
""",
    )
)

register(
    Measure(
        name="ce",
        summary="Co-clustering error (Lomet): d_r + d_c − d_r·d_c (0 = identical).",
        family="partition",
        provider="partition",
        finalize=lambda t: cocluster_scores.ce(*t, dense_limit=_dense_limit()),
        symmetric=True,
        bounds=(0.0, 1.0),
        perfect=0.0,
        doc=r"""
.. math::
    \mathrm{CE} = d_r + d_c - d_r d_c,\quad
    d_r = 1 - \max_\sigma \frac{1}{I}\sum_h n^{zz'}_{h\sigma(h)}

The matchings are assignment problems solved by
:func:`scipy.optimize.linear_sum_assignment`.

Examples
--------
>>> import daskbicl
>>> daskbicl.ce(([0, 0, 1, 1], [0, 1]), ([0, 0, 1, 0], [0, 1]))
0.25
""",
    )
)

register(
    Measure(
        name="nce",
        summary="Normalised co-clustering error, 1 − CE/(1 − 1/(HL)) (1 = identical, 0 = independent).",
        family="partition",
        provider="partition",
        finalize=lambda t, normalizer: cocluster_scores.nce(*t, dense_limit=_dense_limit(), normalizer=normalizer),
        symmetric=True,
        bounds=(0.0, 1.0),
        perfect=1.0,
        params={"normalizer": Param(
            "corrected", OneOf(cocluster_scores.NCE_NORMALIZERS),
            "'corrected': divide CE by its largest value 1 − 1/(HL) (NCE in [0, 1]); 'printed': the published "
            "1/H + 1/L − 1/(HL), which goes below 0 when H or L exceeds 2 (to reproduce published numbers); "
            "'per_axis': each axis's distance over its own largest value, d_r·H/(H−1) and d_c·L/(L−1), "
            "combined as CE (the R package bikm1's NCE_LBM).",
        )},
        version=2,  # the normaliser changed (was the printed one): batch rescores older rows
        doc=r"""
.. math::
    \mathrm{NCE} = 1 - \frac{\mathrm{CE}}{1 - 1/(HL)},\quad
    H = \max(H, H'),\ L = \max(L, L')

and 1 when HL = 1.  The largest possible CE is 1 − 1/(HL) (a best matching
keeps at least 1/H of the rows and 1/L of the columns), so NCE is in [0, 1]:
1 for identical co-clusterings up to relabeling, 0 for the worst case, which
independent uniform clusters reach.

Erratum: the paper prints the normaliser 1/H + 1/L − 1/(HL), from a
mis-derived bound; it equals the largest CE only when H = L = 2 and sends
NCE far below 0 otherwise (−0.6 for a uniform 3 x 3 table).
``normalizer="printed"`` computes that formula, to reproduce published
numbers.  ``normalizer="per_axis"`` reproduces the authors' R package bikm1
(``NCE_LBM``): each axis normalised alone, ``a = d_r H/(H − 1)`` and
``b = d_c L/(L − 1)`` (0 for an axis with one cluster), then
``NCE = 1 − (a + b − ab)``.  It is also in [0, 1], but is 0 as soon as one
axis alone is as bad as it can be.

Examples
--------
>>> import daskbicl
>>> daskbicl.nce(([0, 0, 1, 1], [0, 1]), ([0, 0, 1, 0], [0, 1]))
0.6666666666666666
>>> truth, pred = ([0, 0, 1, 1, 2, 2], [0, 1, 2]), ([0, 0, 1, 2, 2, 2], [0, 1, 1])
>>> daskbicl.nce(truth, pred), daskbicl.nce(truth, pred, normalizer="printed")  # 3 x 3 clusters: they differ
(0.5, 0.2)
>>> daskbicl.nce(truth, pred, normalizer="per_axis")  # bikm1's reading
0.375
""",
    )
)

register(
    Measure(
        name="comi",
        summary="Co-clustering mutual information MI(z,z') + MI(w,w'), in nats.",
        family="partition",
        provider="partition",
        finalize=lambda t: cocluster_scores.comi(*t),
        symmetric=True,
        bounds=(0.0, math.inf),
        perfect=math.nan,  # equals the joint entropy of truth: input dependent
        doc=r"""
Mutual information of the cell table, which factors into the row and the
column mutual informations (natural log).

Examples
--------
>>> import daskbicl
>>> round(daskbicl.comi(([0, 0, 1, 1], [0, 1]), ([1, 1, 0, 0], [0, 1])), 10)  # 2 log 2
1.3862943611
""",
    )
)

register(
    Measure(
        name="conmi",
        summary="coMI / max(H(z)+H(w), H(z')+H(w')) (1 = identical, 0 = independent).",
        family="partition",
        provider="partition",
        finalize=lambda t: cocluster_scores.conmi(*t),
        symmetric=True,
        bounds=(0.0, 1.0),
        perfect=1.0,
        doc=r"""
.. math::
    \mathrm{coNMI} = \frac{\mathrm{coMI}}{\max(H(z)+H(w),\ H(z')+H(w'))}

1 when both joint entropies are 0.

Examples
--------
>>> import daskbicl
>>> daskbicl.conmi(([0, 0, 1, 1], [0, 1]), ([1, 1, 0, 0], [0, 1]))
1.0
""",
    )
)

register(
    Measure(
        name="enmi",
        summary="Extended NMI, NMI(z,z') + NMI(w,w'), range [0, 2] as published.",
        family="partition",
        provider="partition",
        finalize=lambda t: cocluster_scores.enmi(*t),
        symmetric=True,
        bounds=(0.0, 2.0),
        perfect=2.0,
        doc=r"""
.. math::
    \mathrm{ENMI} = \mathrm{NMI}(z, z') + \mathrm{NMI}(w, w'),\quad
    \mathrm{NMI} = \frac{\mathrm{MI}}{\max(H, H')}

The sum, as published (range [0, 2]).  The R package bikm1's ``ENMI()``
returns the *mean* of the two NMIs (range [0, 1]), half of this value.

Examples
--------
>>> import daskbicl
>>> daskbicl.enmi(([0, 0, 1, 1], [0, 1]), ([1, 1, 0, 0], [0, 1]))
2.0
""",
    )
)
