"""Dask: chunked counting passes that produce the small tables measures need."""

from .core import active_client, compute
from .partition import contingency_graph, partition_tables

__all__ = ["active_client", "compute", "contingency_graph", "partition_tables"]
