"""Dask: chunked counting passes that produce the small tables measures need.

Running graphs (the active Client, ``compute``, scattering inputs) lives in
:mod:`daskbicl.scheduling`, shared with :mod:`daskbicl.io`.
"""

from .contingency_pass import contingency_graph, partition_tables

__all__ = ["contingency_graph", "partition_tables"]
