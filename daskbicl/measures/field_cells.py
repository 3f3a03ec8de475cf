"""Element-centric similarity on cells, ``ecs`` (docs/measures/field.md, "ECS of the cells").

Two co-clusterings: from the row and column contingency tables the
co-clustering measures count anyway (no cell visited, no pair of table
entries visited).  Otherwise: from the row and column membership
signatures (the pass of the micro-object and cover measures), for
biclusterings whose biclusters do not overlap.
"""

from __future__ import annotations

from ..engine.blocks import as_biclustering
from ..engine.contingency_pass import partition_tables
from ..engine.core import task
from ..engine.micro_pass import memberships_graph
from ..kernels.bicluster.element_centric_cells import cell_similarity_of_biclusterings
from ..kernels.coclustering.element_centric import cell_similarity
from .registry import Measure, Provider, register, register_provider

__all__: list[str] = []


def _cell_ecs_graph(truth, pred, split_every: int = 8):
    if truth.attrs["daskbicl_kind"] == pred.attrs["daskbicl_kind"] == "partition":
        rows, cols = partition_tables(truth, pred, split_every=split_every)
        return task(cell_similarity)(rows, cols)
    t, p = as_biclustering(truth, "truth"), as_biclustering(pred, "pred")
    rows = memberships_graph(t.row_mask.data, p.row_mask.data, split_every=split_every)
    cols = memberships_graph(t.col_mask.data, p.col_mask.data, split_every=split_every)
    return task(cell_similarity_of_biclusterings)(rows, cols)


register_provider(
    Provider(
        name="cell_ecs",
        build=_cell_ecs_graph,
        kinds=("partition", "biclustering"),
        description="element-centric similarity of the cells: from the row and column contingency tables "
        "(two co-clusterings) or the membership signatures (biclusterings)",
        from_tables=cell_similarity,
    )
)

register(Measure(
    name="ecs",
    summary="Element-centric similarity of the cells (Gates et al. 2019; blocks or biclusters as cell clusters).",
    family="partition", provider="cell_ecs", default=False,
    finalize=lambda value: value,
    symmetric=True, bounds=(0.0, 1.0), perfect=1.0,
    doc=r"""
The elements are the cells of the matrix and the clusters the blocks of a
co-clustering (the biclusters of a biclustering, each cell no bicluster
covers a cluster of its own).  For a cell in truth cluster A and pred
cluster B, its score is :math:`|A \cap B| / \max(|A|, |B|)`, and

.. math::
    \mathrm{ECS} = \frac{1}{IJ} \sum_{p, q} \frac{c_p^2\, c_q^2}{\max(a_p a_q,\ b_p b_q)}

for two co-clusterings, over the non-zero entries p of the row table
(``c_p`` rows in truth row cluster of size ``a_p`` and pred row cluster of
size ``b_p``) and q of the column table.  As clusim's ``element_sim`` (any
α; 0.9 there) on the cell memberships.  Computed with one sort and prefix
sums, O((P + Q) log P), never pair by pair; for biclusterings from the K x L
shared-row and shared-column tables.  Biclusterings whose biclusters
overlap are refused (:class:`~daskbicl.errors.InputError`): their
affinities have no closed form.

Reference: Gates, Wood, Hetrick & Ahn (2019), Element-centric clustering
comparison unifies overlaps and hierarchy, Scientific Reports 9:8574;
clusim's ``element_sim``.

Examples
--------
>>> import daskbicl
>>> round(daskbicl.ecs(([0, 0, 1, 1], [0, 1, 1]), ([0, 0, 0, 1], [0, 1, 1])), 6)
0.541667
""",
))
