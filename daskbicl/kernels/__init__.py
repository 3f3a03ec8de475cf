"""Pure-numpy kernels: small tables in, numbers out.

Nothing in this subpackage imports dask or xarray; the engine layer schedules
these functions on chunks and the measures layer finalizes their tables.
"""
