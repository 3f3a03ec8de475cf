"""clusim's element-centric scores of overlapping clusterings, as the tests and benchmarks compare with.

clusim 0.4's ``make_cielg`` fails on overlapping clusterings with current
scipy; clusim's repository builds the cluster-induced element graph as below
since its fix (Hoosier-Clusters/clusim commit 2736a23,
``clusim/clusimelement.py`` ``make_cielg``), and clusim's own PageRank
(``numerical_ppr_scores``, igraph's prpack) and corrected L1 (``cL1``) do the
rest.  Importing this module needs nothing; calling it needs clusim, igraph
and scipy.
"""
from __future__ import annotations

import numpy as np


def clusim_affinities(member: np.ndarray, alpha: float):
    """clusim's PageRank affinities of the clustering whose element i is in the clusters ``member[i]`` is True for."""
    import clusim.clusimelement as element
    import igraph
    import scipy.sparse as sp
    from clusim.clustering import Clustering

    c = Clustering(elm2clu_dict={i: [f"c{k}" for k in np.flatnonzero(row)] or [f"alone{i}"]
                                 for i, row in enumerate(member)})
    if c.is_disjoint:
        return element.ppr_partition(c, alpha=alpha)
    elements, clusters = element.relabel_objects(c.elements), element.relabel_objects(c.clusters)
    edges = np.array([[elements[e], clusters[k]] for k, els in c.clu2elm_dict.items() for e in els])
    adj = sp.coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(c.n_elements, c.n_clusters))
    proj = sp.coo_matrix(sp.coo_matrix(adj / adj.sum(axis=1)).dot(sp.coo_matrix(adj / adj.sum(axis=0)).T))
    graph = igraph.Graph(list(zip(proj.row.tolist(), proj.col.tolist())),
                         edge_attrs={"weight": proj.data.tolist()}, directed=True)
    return element.numerical_ppr_scores(graph, c, alpha=alpha)


def clusim_scores(truth: np.ndarray, pred: np.ndarray, alpha: float = 0.9) -> np.ndarray:
    """Each element's clusim score (its corrected L1 of the two affinities); ``truth``/``pred``: (n, K) members."""
    import clusim.clusimelement as element

    return element.cL1(clusim_affinities(truth, alpha), clusim_affinities(pred, alpha), alpha)
