"""Fingerprint and open a batch's stores in the cluster's workers, where the bytes are.

When a batch run has a cluster at hand before it plans (a ``Client`` passed
to :func:`~daskbicl.batch.run_batch`, or an active one), the client does not
read the stores' bytes: :func:`~daskbicl.batch.runner.survey` only lists
them and reads their kinds (and fingerprints the stores whose write record
or object listing vouches for them: no chunk read, nothing for a worker
to do), and :func:`fingerprint_on_cluster` sends one task per other
store to the workers, ahead of any other task
(:func:`survey_task`): it hashes the store
(:func:`~daskbicl.batch.fingerprint.fingerprint_task`, the same digest as in
the client) and then opens it, and sends back the fingerprint and the lazy
Dataset (a few kB: metadata and the task graph that reads the chunks).  The
client neither hashes nor opens a store one after the other: the workers do
both, in parallel, and the client unpickles the Datasets.

Why the guarantees still hold: the fingerprint is the digest of the bytes
the worker read, and the ``stat`` listing kept with it is the one the worker
took before hashing; the store is opened after that listing, and the
re-check of a completed pair (:func:`daskbicl.batch.collect._changed`)
compares the store with it, so a store changed at any time after its listing
records nothing, as before.  A store that fails to open on the worker is
opened again in the client, so its error is the one a client-side open
gives.
"""

from __future__ import annotations

import dataclasses
import time

from ..errors import DaskbiclError, InfrastructureError, WorkerKilledError
from ..io.store import open_store
from .fingerprint import StoreInfo, fingerprint_stores, fingerprint_task

__all__ = ["fingerprint_on_cluster", "survey_task", "FINGERPRINT_PRIORITY"]

#: Scheduling priority of the hashing tasks: ahead of every scoring task.
FINGERPRINT_PRIORITY = 100


def survey_task(path: str, role: str, storage_options: dict | None = None) -> tuple[StoreInfo, object, dict]:
    """(the store's :class:`StoreInfo` with its fingerprint, the opened Dataset or None, its label codings):
    a worker's task.  The codings (``{variable: (codes, values, unassigned)}``) let the client register the
    decoded label arrays as this process would have (:func:`_registered`)."""
    from ..codes import coding_of

    info = fingerprint_task(path, storage_options)
    if info.error:
        return info, None, {}
    try:
        ds = open_store(path, role, storage_options=storage_options)
    except DaskbiclError:
        return info, None, {}  # opened again in the client, which says why
    codings = {}
    for var in ds.data_vars:
        coding = coding_of(ds[var].data)
        if coding is not None:
            codings[var] = (coding.codes, coding.values, coding.unassigned)
    return info, ds, codings


def _registered(ds, codings: dict):
    """``ds`` (opened by a worker) with its coded label arrays decoded again here, under the same task names.

    The counting passes count a stored label array's codes instead of its
    decoded labels when the array is registered as decoded in the process
    that builds the graphs (:func:`daskbicl.codes.coding_of`); a Dataset
    unpickled from a worker is not, so each is rebuilt here with
    :func:`daskbicl.codes.decoded` over the same codes (the same chunk reads;
    the decoding tasks may be named differently in this process, which
    does not matter: the client builds every pair from this one Dataset).
    """
    from ..codes import decoded

    for var, (codes, values, unassigned) in codings.items():
        labels = decoded(codes, values, unassigned)
        if labels.chunks == ds[var].data.chunks and labels.dtype == ds[var].dtype:
            ds = ds.assign({var: (ds[var].dims, labels, ds[var].attrs)})
    return ds


def _roles(pairs, todo: list[str]) -> list[str]:
    """The role each store of ``todo`` is opened as (its first pair's): its errors name that side."""
    roles: dict[str, str] = {}
    for truth, pred in pairs:
        roles.setdefault(truth, "truth")
        roles.setdefault(pred, "pred")
    return [roles.get(p, "store") for p in todo]


def fingerprint_on_cluster(client, manifest, stores: dict[str, StoreInfo], opened: dict,
                           arrived=None) -> dict[str, StoreInfo]:
    """``stores`` with every fingerprint computed by ``client``'s workers; ``opened`` filled with their Datasets.

    ``stores`` comes from ``survey(manifest, contents=False)``; a store with
    an error is left as it is.  ``opened`` receives ``{path: Dataset}`` for
    every store the workers opened.  ``arrived(path)`` (optional) is called
    as each store is taken in, while the workers still hash the others.

    Raises
    ------
    InfrastructureError
        The scheduler was lost, or had no worker for too long.
    """
    from ..scheduling import wait_watched

    todo = [p for p, info in stores.items() if info.error is None and info.fingerprint is None]
    if not todo:
        return stores
    storage_options = manifest.storage_options or None
    started = time.time()
    futures = client.map(survey_task, todo, _roles(manifest.pairs, todo), storage_options=storage_options,
                         pure=False, priority=FINGERPRINT_PRIORITY)
    out = dict(stores)
    path_of = {future.key: path for path, future in zip(todo, futures)}
    pending = list(futures)
    while pending:  # each store taken in as it arrives: unpickled while the workers hash the others
        done, rest = wait_watched(client, pending, return_when="FIRST_COMPLETED")
        pending = list(rest)
        for future in done:
            _take(client, future, path_of[future.key], stores, out, opened, started, storage_options)
            if arrived is not None:
                arrived(path_of[future.key])
    return out


def _take(client, future, path: str, stores: dict, out: dict, opened: dict, started: float,
          storage_options: dict | None) -> None:
    """One store's :func:`survey_task` result into ``out`` (its StoreInfo) and ``opened`` (its Dataset)."""
    from ..scheduling import infrastructure_failure

    try:
        info, dataset, codings = future.result()
    except Exception as exc:
        error = infrastructure_failure(client, exc, started)
        if isinstance(error, InfrastructureError) and not isinstance(error, WorkerKilledError):
            raise error from None  # the cluster is gone: the run ends (exit status 3)
        info, dataset, codings = fingerprint_stores([path], storage_options, kinds=False)[path], None, {}
    finally:
        future.release()
    if info.error:
        out[path] = StoreInfo(path, error=info.error)
        return
    out[path] = dataclasses.replace(stores[path], fingerprint=info.fingerprint, objects=info.objects,
                                    nbytes=info.nbytes, stat=info.stat)
    if dataset is not None:
        opened[path] = _registered(dataset, codings)
