"""The S3 file system daskbicl reads with: s3fs's, each request tried as many times as botocore is told.

s3fs repeats a call that timed out or was cut off up to ``S3FileSystem.retries`` (5) times on its own, and a
whole-object read is wrapped in that loop twice (25 tries), each of them made of botocore's own attempts
(``config_kwargs={"retries": ...}``): one hung read of a store's ``zarr.json`` cost 50 requests with
``daskbicl.storage.attempts`` 1.  This subclass makes one try per call, so the attempts of a request are
botocore's alone: ``daskbicl.storage.attempts`` (:func:`daskbicl.io.storage.with_timeouts`) or the
caller's own ``config_kwargs["retries"]``.  It is used only by daskbicl (:func:`daskbicl.io.storage.filesystem`):
s3fs's class, and the file systems others open with fsspec, are untouched; fsspec keeps its instances
apart from s3fs's (one instance cache per class), each keyed by its options (the attempts among them), and
a pickled one (a worker's) is rebuilt as this class.
"""

from __future__ import annotations

from s3fs import S3FileSystem

__all__ = ["OneTryS3FileSystem"]


class OneTryS3FileSystem(S3FileSystem):
    """:class:`s3fs.S3FileSystem` without its own retry loop (``retries = 1``): botocore's attempts only."""

    retries = 1
