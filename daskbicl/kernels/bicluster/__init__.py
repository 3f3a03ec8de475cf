"""Biclustering kernels: intersection tables, precision-recall scores, matching."""
