"""A catalogue of bad inputs: one case per class, for the API and the CLI.

Each API case asserts the exception class (always a DaskbiclError) and the
message; each CLI case the exit status 2, exactly one ``daskbicl: error:``
line on stderr, no traceback, and that nothing was left behind (no new
file, no hidden temporary folder) in the working folder or next to the
stores.  Stores are real ``daskbicl.save`` outputs damaged the way stores
get damaged (tests/damaged.py).  Failures of the environment (disk full,
signals, permissions, the cluster) are in tests/test_failures.py; they add
their classes to this catalogue's count (see ``test_the_catalogue_covers``).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import dask.array as da
import numpy as np
import pandas as pd
import pytest
import xarray as xr

import daskbicl
from daskbicl.batch import ManifestError, ResultsDB, ResultsFileError, load_manifest
from daskbicl.batch.results import Pair
from daskbicl.errors import StoreReadError

from .damaged import DAMAGE, make_stores

T = daskbicl.partition([0, 0, 1, 1], [0, 1, 1])
B = daskbicl.biclustering([[1, 1, 0, 0]], [[1, 1, 0]])
E = daskbicl.errors


@pytest.fixture(scope="module")
def s(tmp_path_factory) -> Path:
    """The stores folder (tests/damaged.py), manifests and results files of every kind."""
    root = make_stores(tmp_path_factory.mktemp("catalogue"))
    head = '[truth]\nt = "t.zarr"\n[pred]\np = "t.zarr"\n'
    pairs = '[[pairs]]\ntruth = "t"\npred = "p"\n'
    manifests = {
        "syntax": "[truth\n",
        "unknown_key": head + pairs + "colour = 'red'\n",
        "unknown_group": head + '[[pairs]]\ntruth = "t"\npred = "q"\n',
        "glob_nothing": '[truth]\nt = "t.zarr"\n[pred]\np = "nothing-*.zarr"\n' + pairs,
        "results_number": "results = 5\n" + head + pairs,
        "params_alone": head + pairs + "params = { beta = 2 }\n",
        "policy": head + pairs + 'unassigned = "maybe"\n',
        "measure_unknown": head + pairs + 'measures = ["carri"]\n',
        "measure_kind": '[truth]\nt = "b.zarr"\n[pred]\np = "b.zarr"\n' + pairs + 'measures = ["cari"]\n',
        "param_type": head + pairs + 'measures = ["fmeasure"]\nparams = { beta = "big" }\n',
        "no_pairs": head,
        "pairs_not_tables": "pairs = 3\n" + head,
        "ok": head + pairs + 'measures = ["cari"]\n',
    }
    for name, text in manifests.items():
        (root / f"{name}.toml").write_text(text)
    (root / "latin1.toml").write_bytes("[truth]\nt = 'caf\xe9'\n".encode("latin-1"))
    (root / "corrupt.sqlite").write_text("this is not a database")
    (root / "folder.sqlite").mkdir()
    with ResultsDB(root / "future.sqlite"):  # a daskbicl results file, then made as a newer version would
        pass
    with contextlib.closing(sqlite3.connect(root / "future.sqlite")) as con:
        con.execute("PRAGMA user_version = 99")
    with contextlib.closing(sqlite3.connect(root / "foreign.sqlite")) as con:
        con.execute("CREATE TABLE customers (id, name)")
        con.commit()
    with ResultsDB(root / "good.sqlite"):
        pass
    np.save(root / "labels.npy", np.arange(4000) % 5)
    np.save(root / "cols.npy", np.arange(300) % 3)
    np.save(root / "mask2.npy", np.full((1, 4000), 2))
    (root / "text.npy").write_text("not numpy")
    (root / "labels.csv").write_text("a,b\n1,2\n")
    (root / "bad.json").write_text("[{rows: 1}")
    (root / "idx.json").write_text('[{"rows": [0], "cols": [0]}]')
    return root


def listing(folder: Path) -> set[str]:
    return set(os.listdir(folder))


def objects(values: list) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


# --------------------------------------------------------------------------- API

#: name -> (call(stores folder), exception class, part of the message)
API_CASES = {
    # measures and parameters (checked before any data is read)
    "measures not a name": (lambda s: daskbicl.score(T, T, measures=5), E.MeasureError, "measure name or a list"),
    "measures nested": (lambda s: daskbicl.score(T, T, measures=[["cari"]]), E.MeasureError, "measure name or a list"),
    "measures empty": (lambda s: daskbicl.score(T, T, measures=[]), E.MeasureError, "measures is empty"),
    "unknown measure": (lambda s: daskbicl.score(T, T, measures=["carri"]), E.MeasureError, "Did you mean 'cari'"),
    "measure of another kind": (lambda s: daskbicl.score(B, B, measures=["cari"]), E.MeasureError, "needs co-clusterings"),
    "unknown parameter": (lambda s: daskbicl.score(B, B, measures=["fmeasure"], gamma=1), E.MeasureError, "unknown parameter(s) gamma"),
    "beta a list": (lambda s: daskbicl.fmeasure(B, B, beta=[2]), E.MeasureError, "parameter beta must be a number"),
    "beta a boolean": (lambda s: daskbicl.fmeasure(B, B, beta=True), E.MeasureError, "parameter beta must be a number"),
    "beta huge int": (lambda s: daskbicl.fmeasure(B, B, beta=10**400), E.MeasureError, "parameter beta must be a number"),
    "beta zero": (lambda s: daskbicl.fmeasure(B, B, beta=0), E.MeasureError, "in (0, inf)"),
    "beta nan": (lambda s: daskbicl.fmeasure(B, B, beta=float("nan")), E.MeasureError, "in (0, inf)"),
    "beta inf": (lambda s: daskbicl.fmeasure(B, B, beta=float("inf")), E.MeasureError, "in (0, inf)"),
    "R negative": (lambda s: daskbicl.goodness(B, B, R=-1), E.MeasureError, "parameter R must be"),
    "R text": (lambda s: daskbicl.goodness(B, B, R="lots"), E.MeasureError, "parameter R must be"),
    "clip not boolean": (lambda s: daskbicl.jaccard(B, B, clip="maybe"), E.MeasureError, "parameter clip must be a boolean"),
    "clip 2": (lambda s: daskbicl.jaccard(B, B, clip=2), E.MeasureError, "parameter clip must be a boolean"),
    "multiset not boolean": (lambda s: daskbicl.micro_ce(B, B, multiset="both"), E.MeasureError, "parameter multiset"),
    "unassigned policy unknown": (lambda s: daskbicl.score(T, T, unassigned="ignore"), E.DaskbiclError, "unassigned"),
    "null draws zero": (lambda s: daskbicl.null(T, T, n=0), E.InputError, "number of null draws"),
    "weighted index of text": (lambda s: daskbicl.weighted_index("x", 0.5, 0.5), E.InputError, "pre must be a number"),
    "weighted index unknown": (lambda s: daskbicl.weighted_index(0.5, 0.5, 0.5, "cosine"), E.MeasureError, "unknown index 'cosine'"),
    "tables with a pred": (lambda s: daskbicl.score(daskbicl.contingency(T, T), T), E.InputError, "pass no pred"),
    "pred missing": (lambda s: daskbicl.score(T), E.InputError, "pred is missing"),
    # label arrays
    "input of an unknown type": (lambda s: daskbicl.score(T, 42), E.InputError, "expected an xarray.Dataset"),
    "tuple of three": (lambda s: daskbicl.score(T, ([0], [0], [0])), E.InputError, "(row_labels, col_labels)"),
    "2-D labels in a tuple": (lambda s: daskbicl.score(T, (np.zeros((4, 2), int), [0, 1, 1])), E.InputError, "must be 1-D"),
    "labels a set": (lambda s: daskbicl.score(T, ({0, 1, 2, 3}, [0, 1, 1])), E.InputError, "has no order"),
    "labels a dict": (lambda s: daskbicl.score(T, ({0: 1, 1: 1, 2: 0, 3: 0}, [0, 1, 1])), E.InputError, "is a dict"),
    "labels a string": (lambda s: daskbicl.score(T, ("abcd", [0, 1, 1])), E.InputError, "single str"),
    "labels a number": (lambda s: daskbicl.score(T, (5, [0, 1, 1])), E.InputError, "list or array of labels"),
    "labels raw records": (lambda s: daskbicl.score(T, (np.zeros(4, "V3"), [0, 1, 1])), E.LabelError, "raw records"),
    "labels NaN": (lambda s: daskbicl.score(T, ([0.0, np.nan, 1.0, 1.0], [0, 1, 1])), E.LabelError, "1 unassigned entry"),
    "labels pandas NA": (lambda s: daskbicl.score(T, (pd.array([0, None, 1, 1], dtype="Int64"), [0, 1, 1])), E.LabelError, "unassigned entry"),
    "labels negative": (lambda s: daskbicl.score(T, ([0, -1, 1, 1], [0, 1, 1])), E.LabelError, "unassigned entry"),
    "labels unhashable": (lambda s: daskbicl.score(T, (objects([[0], [1], [0], [1]]), [0, 1, 1])), E.LabelError, "cannot be a label"),
    "labels empty": (lambda s: daskbicl.score(T, ([], [0, 1, 1])), E.InputError, "empty 'row' axis"),
    "labels of unknown chunk sizes": (lambda s: daskbicl.score((lambda z: (z[z >= 0], [0, 1, 1]))(da.from_array(np.array([0, 0, 1, 1]), chunks=2)), T), E.AlignmentError, "unknown number of rows"),
    "lengths differ": (lambda s: daskbicl.score(T, ([0, 1, 1], [0, 1, 1])), E.AlignmentError, "truth has 4 rows but pred has 3"),
    "integer masks in a tuple": (lambda s: daskbicl.score(B, (np.ones((1, 4), np.int64), np.ones((1, 3), np.int64))), E.InputError, "must be boolean"),
    "unfitted model": (lambda s: daskbicl.score(T, type("Model", (), {"fit": lambda self: self})()), E.InputError, "fit it first"),
    "not an estimator": (lambda s: daskbicl.from_estimator(object()), E.InputError, "neither row_labels_"),
    "empty truth": (lambda s: daskbicl.score(daskbicl.biclustering(np.zeros((0, 4), bool), np.zeros((0, 3), bool)), B), E.InputError, "truth has no biclusters"),
    "masks of different counts": (lambda s: daskbicl.biclustering([[1, 0]], [[1], [0]]), E.InputError, "row_mask has 1 biclusters but col_mask has 2"),
    "mask values not 0/1": (lambda s: daskbicl.biclustering([[2, 0]], [[1]]), E.InputError, "must be boolean"),
    "1-D mask": (lambda s: daskbicl.biclustering([1, 0], [[1]]), E.InputError, "must be 2-D"),
    "index list not pairs": (lambda s: daskbicl.biclustering_from_indices([[0]], shape=(2, 2)), E.InputError, "expected a (rows, cols) pair"),
    "index out of range": (lambda s: daskbicl.biclustering_from_indices([([9], [0])], shape=(2, 2)), E.InputError, "outside 0..1"),
    # datasets and coordinates
    "dataset without the variables": (lambda s: daskbicl.score(T, xr.Dataset({"z": ("row", [0, 1, 1, 0])})), E.InputError, "expected variables 'row_labels'"),
    "dataset with other dimensions": (lambda s: daskbicl.score(T, xr.Dataset({"row_labels": ("x", [0, 1, 1, 0]), "col_labels": ("col", [0, 1, 1])})), E.InputError, "must have dimensions ('row',)"),
    "kind attribute unknown": (lambda s: daskbicl.score(T, T.assign_attrs(daskbicl_kind="tree")), E.InputError, "daskbicl_kind='tree'"),
    "kind attribute an array": (lambda s: daskbicl.score(T, T.assign_attrs(daskbicl_kind=np.array([1, 2]))), E.InputError, "is not one of"),
    "kind attribute contradicts variables": (lambda s: daskbicl.score(T, T.assign_attrs(daskbicl_kind="biclustering")), E.InputError, "variables describe a partition"),
    "integer mask variable": (lambda s: daskbicl.score(B, xr.Dataset({"row_mask": (("bicluster", "row"), np.ones((1, 4), int)), "col_mask": (("bicluster", "col"), np.ones((1, 3), int))})), E.InputError, "masks must be bool"),
    "coordinates of the wrong length": (lambda s: daskbicl.biclustering([[1, 0]], [[1]], row=["a"]), E.InputError, "row coordinates have 1 labels for 2"),
    "coordinates a string": (lambda s: daskbicl.biclustering([[1, 0, 1]], [[1]], row="abc"), E.InputError, "must be a sequence of labels"),
    "partition coordinates a string": (lambda s: daskbicl.partition([0, 1, 1], [0], row="abc"), E.InputError, "must be a sequence of labels"),
    "partition coordinates 2-D": (lambda s: daskbicl.partition([0, 1], [0], row=np.zeros((2, 2))), E.InputError, "must be 1-D"),
    "coordinates a set": (lambda s: daskbicl.partition([0, 1], [0], row={"a", "b"}), E.InputError, "must be a sequence of labels"),
    "duplicated coordinates": (lambda s: daskbicl.biclustering([[1, 0]], [[1]], row=["a", "a"]), E.InputError, "repeat labels"),
    "coordinates that do not match": (lambda s: daskbicl.score(daskbicl.partition([0, 1], [0], row=["a", "b"]), daskbicl.partition([0, 1], [0], row=["a", "c"])), E.AlignmentError, "do not match"),
    "boolean coordinates against integers": (lambda s: daskbicl.score(daskbicl.partition([0, 1], [0], row=[True, False]), daskbicl.partition([0, 1], [0], row=[1, 0])), E.AlignmentError, "booleans match only booleans"),
    # stores read (real damaged stores, tests/damaged.py)
    "store that does not exist": (lambda s: daskbicl.score(s / "missing.zarr", T), E.StoreError, "no such file or directory"),
    "store path a file": (lambda s: daskbicl.open(s / "file.zarr"), E.StoreError, "is a file but not a NetCDF file"),
    "store folder empty": (lambda s: daskbicl.open(s / "empty.zarr"), E.StoreError, "not a readable Zarr store"),
    "store of other arrays": (lambda s: daskbicl.open(s / "plain.zarr"), E.StoreError, "found arrays ['x']"),
    "store a symlink loop": (lambda s: daskbicl.open(s / "loop.zarr"), E.StoreError, "loop of symbolic links"),
    "store a broken symlink": (lambda s: daskbicl.open(s / "broken.zarr"), E.StoreError, "broken symbolic link"),
    "store chunk truncated": (lambda s: daskbicl.score(s / "t.zarr", s / "truncated.zarr"), StoreReadError, "(variable row_labels chunk 1): the chunk is damaged"),
    "store chunk bits flipped": (lambda s: daskbicl.score(s / "t.zarr", s / "flipped.zarr"), StoreReadError, "chunk 1): the chunk is damaged"),
    "store chunk emptied": (lambda s: daskbicl.score(s / "t.zarr", s / "empty_chunk.zarr"), StoreReadError, "chunk 1): the chunk is damaged"),
    "store chunk a folder": (lambda s: daskbicl.open(s / "folder_chunk.zarr"), E.StoreError, "missing 1 of its 16 chunks"),
    "store chunk deleted": (lambda s: daskbicl.open(s / "deleted_chunk.zarr"), E.StoreError, "missing 1 of its 16 chunks"),
    "store variable metadata deleted": (lambda s: daskbicl.open(s / "deleted_metadata.zarr"), E.StoreError, "variable row_labels has lost its metadata"),
    "store variable metadata damaged": (lambda s: daskbicl.open(s / "damaged_metadata.zarr"), E.StoreError, "row_labels/zarr.json is damaged"),
    "store dtype edited": (lambda s: daskbicl.score(s / "t.zarr", s / "dtype_edited.zarr"), StoreReadError, "does not match the array's metadata"),
    "store shape edited": (lambda s: daskbicl.open(s / "shape_edited.zarr"), E.StoreError, "is missing 4 of its 20 chunks"),
    "store kind attribute an array": (lambda s: daskbicl.open(s / "kind_array.zarr"), E.InputError, "daskbicl_kind=[1, 2]"),
    "store kind attribute unknown": (lambda s: daskbicl.open(s / "kind_unknown.zarr"), E.InputError, "daskbicl_kind='tree'"),
    "store root metadata deleted": (lambda s: daskbicl.open(s / "root_metadata_gone.zarr"), E.StoreError, "not a readable Zarr store"),
    "zarr v2 store chunk truncated": (lambda s: daskbicl.score(s / "t.zarr", s / "v2.zarr"), StoreReadError, "v2.zarr (variable row_labels chunk 1)"),
    "fsspec URL missing": (lambda s: daskbicl.open("memory://catalogue/nothing.zarr"), E.StoreError, "memory://catalogue/nothing.zarr"),
    "fsspec protocol unknown": (lambda s: daskbicl.open("nosuchprotocol://x.zarr"), E.StoreError, "nosuchprotocol://x.zarr"),
    "open a number": (lambda s: daskbicl.open(123), E.InputError, "got int"),
    "open None": (lambda s: daskbicl.open(None), E.InputError, "got NoneType"),
    "open bytes": (lambda s: daskbicl.open(b"t.zarr"), E.InputError, "got bytes"),
    # stores written
    "save chunk zero": (lambda s: daskbicl.save(T, s / "new.zarr", chunk=0), E.InputError, "chunk must be a positive integer"),
    "save chunk negative": (lambda s: daskbicl.save(T, s / "new.zarr", chunk=-5), E.InputError, "chunk must be a positive integer"),
    "save chunk text": (lambda s: daskbicl.save(T, s / "new.zarr", chunk="x"), E.InputError, "chunk must be a positive integer"),
    "save chunk a float": (lambda s: daskbicl.save(T, s / "new.zarr", chunk=2.5), E.InputError, "chunk must be a positive integer"),
    "save chunk True": (lambda s: daskbicl.save(T, s / "new.zarr", chunk=True), E.InputError, "chunk must be a positive integer"),
    "save attribute not storable": (lambda s: daskbicl.save(T.assign_attrs(model=object()), s / "new.zarr"), E.InputError, "cannot store attribute 'model'"),
    "save variable attribute not storable": (lambda s: daskbicl.save(T.assign(row_labels=T.row_labels.assign_attrs(f=len)), s / "new.zarr"), E.InputError, "of variable 'row_labels'"),
    "save mixed coordinates": (lambda s: daskbicl.save(daskbicl.partition([0, 1, 1], [0], row=np.array([1, "a", 2.5], object)), s / "new.zarr"), E.InputError, "mix value types"),
    "save huge integer labels": (lambda s: daskbicl.save(([2**70, 1, 2], [0]), s / "new.zarr"), E.InputError, "do not fit a numpy integer array"),
    "save path a number": (lambda s: daskbicl.save(T, 5), E.InputError, "path or URL"),
    "save under a file": (lambda s: daskbicl.save(T, s / "file.zarr" / "sub" / "new.zarr"), E.StoreError, "is a file, not a folder"),
    "save inside a store on a URL": (lambda s: (daskbicl.save(T, "memory://nest/dk.zarr", overwrite=True), daskbicl.save(T, "memory://nest/dk.zarr/row_labels/inner.zarr")), E.StoreError, "inside the Zarr store memory://"),
    "save over a store": (lambda s: daskbicl.save(T, s / "t.zarr"), E.StoreError, "already exists; pass overwrite=True"),
    "save over a file": (lambda s: daskbicl.save(T, s / "file.zarr", overwrite=True), E.StoreError, "is a file, not a daskbicl store"),
    "save over other data": (lambda s: daskbicl.save(T, s / "plain.zarr", overwrite=True), E.StoreError, "is not a daskbicl store"),
    "save inside a store": (lambda s: daskbicl.save(T, s / "t.zarr" / "inner.zarr"), E.StoreError, "inside the Zarr store"),
    "save inside a store's array": (lambda s: daskbicl.save(T, s / "t.zarr" / "row_labels" / "x.zarr"), E.StoreError, "inside the Zarr store"),
    "save over a URL without overwrite": (lambda s: (daskbicl.save(T, "memory://catalogue/a.zarr", overwrite=True), daskbicl.save(T, "memory://catalogue/a.zarr")), E.StoreError, "already exists"),
    "save over another tool's URL": (lambda s: (__import__("fsspec").filesystem("memory").pipe("/catalogue/other/x.csv", b"1"), daskbicl.save(T, "memory://catalogue/other", overwrite=True)), E.StoreError, "is not a daskbicl store"),
    "save a damaged store elsewhere": (lambda s: daskbicl.save(daskbicl.open(s / "truncated.zarr"), s / "new.zarr"), StoreReadError, "truncated.zarr (variable row_labels chunk 1)"),
    # batch manifests and results files (Python API)
    "manifest missing": (lambda s: load_manifest(s / "none.toml"), ManifestError, "cannot read manifest"),
    "manifest results a number": (lambda s: load_manifest(s / "results_number.toml"), ManifestError, "line 1: results must be the path"),
    "results file corrupt": (lambda s: ResultsDB(s / "corrupt.sqlite"), ResultsFileError, "not a usable SQLite results file"),
    "results file a folder": (lambda s: ResultsDB(s / "folder.sqlite"), ResultsFileError, "is a folder"),
    "results file from the future": (lambda s: ResultsDB(s / "future.sqlite"), ResultsFileError, "newer daskbicl (schema 99"),
    "results file of another program": (lambda s: ResultsDB(s / "foreign.sqlite"), ResultsFileError, "did not write (tables customers)"),
}


@pytest.mark.parametrize("case", sorted(API_CASES))
def test_api_bad_input(case, s):
    call, exc, message = API_CASES[case]
    before = listing(s)
    with pytest.raises(exc) as info:
        call(s)
    assert message in str(info.value), str(info.value)
    assert isinstance(info.value, daskbicl.DaskbiclError)
    assert listing(s) == before  # nothing half-written, no temporary folder


def test_a_refused_overwrite_leaves_the_other_data(s):
    """The URL case above refused; the other tool's file is still there, and nothing else was written."""
    import fsspec

    fs = fsspec.filesystem("memory")
    fs.pipe("/keep/data.csv", b"1,2,3")
    with pytest.raises(daskbicl.StoreError):
        daskbicl.save(T, "memory://keep", overwrite=True)
    assert fs.find("/keep") == ["/keep/data.csv"]
    with pytest.raises(daskbicl.StoreError):
        daskbicl.save(T, s / "plain.zarr", overwrite=True)
    assert daskbicl.batch.fingerprint_stores([s / "plain.zarr"])  # still a readable folder


# --------------------------------------------------------------------------- CLI

#: name -> (arguments, with {s} the stores folder, part of the one error line)
CLI_CASES = {
    "no command": ([], "required: command"),
    "unknown command": (["frobnicate"], "invalid choice"),
    "score missing pred": (["score", "t.zarr"], "the following arguments are required"),
    "score unknown measure": (["score", "{s}/t.zarr", "{s}/t.zarr", "--measure", "carri"], "unknown measure"),
    "score measure of another kind": (["score", "{s}/b.zarr", "{s}/b.zarr", "--measure", "cari"], "needs co-clusterings"),
    "score bad param syntax": (["score", "t.zarr", "t.zarr", "--param", "beta"], "expected NAME=VALUE"),
    "score bad param value": (["score", "t.zarr", "t.zarr", "--param", "beta=x"], "parameter beta must be a number in (0, inf)"),
    "score param overflows": (["score", "t.zarr", "t.zarr", "--param", "beta=1e400"], "in (0, inf)"),
    "score param unknown": (["score", "{s}/b.zarr", "{s}/b.zarr", "--measure", "fmeasure", "--param", "gamma=1"], "unknown parameter(s) gamma"),
    "score unassigned policy": (["score", "t.zarr", "t.zarr", "--unassigned", "ignore"], "invalid choice"),
    "score store missing": (["score", "missing.zarr", "missing.zarr"], "missing.zarr"),
    "score workers negative": (["score", "t.zarr", "t.zarr", "--workers", "-1"], "expected a positive integer"),
    "score store a file": (["score", "{s}/t.zarr", "{s}/file.zarr"], "is a file but not a NetCDF file"),
    "score chunk truncated": (["score", "{s}/t.zarr", "{s}/truncated.zarr"], "cannot read pred {s}/truncated.zarr (variable row_labels chunk 1): the chunk is damaged"),
    "score chunk flipped": (["score", "{s}/flipped.zarr", "{s}/t.zarr"], "cannot read truth {s}/flipped.zarr (variable row_labels chunk 1)"),
    "score chunk deleted": (["score", "{s}/t.zarr", "{s}/deleted_chunk.zarr"], "missing 1 of its 16 chunks"),
    "score metadata deleted": (["score", "{s}/t.zarr", "{s}/deleted_metadata.zarr"], "has lost its metadata"),
    "score metadata damaged": (["score", "{s}/t.zarr", "{s}/damaged_metadata.zarr"], "row_labels/zarr.json is damaged"),
    "score dtype edited": (["score", "{s}/t.zarr", "{s}/dtype_edited.zarr"], "does not match the array's metadata"),
    "score kind an array": (["score", "{s}/t.zarr", "{s}/kind_array.zarr"], "daskbicl_kind=[1, 2]"),
    "score symlink loop": (["score", "{s}/t.zarr", "{s}/loop.zarr"], "loop of symbolic links"),
    "score zarr v2 damaged": (["score", "{s}/t.zarr", "{s}/v2.zarr"], "v2.zarr (variable row_labels chunk 1)"),
    "score URL missing": (["score", "{s}/t.zarr", "memory://nothing.zarr"], "memory://nothing.zarr"),
    "score workers 1e9": (["score", "{s}/t.zarr", "{s}/t.zarr", "--workers", "1e9", "--scheduler", "local"], "is more than"),
    "score scheduler malformed": (["score", "{s}/t.zarr", "{s}/t.zarr", "--scheduler", "nonsense::"], "--scheduler takes an address"),
    "score null zero": (["score", "t.zarr", "t.zarr", "--null", "0"], "expected a positive integer"),
    "generate rows 1e30": (["generate", "g", "--rows", "1e30"], "too large (at most 2**53)"),
    "generate rows 2**63": (["generate", "g", "--rows", "9223372036854775808"], "too large (at most 2**53)"),
    "generate rows 1e12": (["generate", "g", "--rows", "1e12", "--cols", "10"], "pass --chunk"),
    "generate rows inf": (["generate", "g", "--rows", "1e999"], "expected a positive integer"),
    "generate rows zero": (["generate", "g", "--rows", "0"], "expected a positive integer"),
    "generate chunk text": (["generate", "g", "--chunk", "big"], "expected a positive integer"),
    "generate noise": (["generate", "g", "--noise", "2"], "--noise"),
    "generate noise nan": (["generate", "g", "--noise", "nan"], "--noise"),
    "generate negative seed": (["generate", "g", "--seed", "-1"], "--seed"),
    "generate bad kind": (["generate", "g", "--kind", "tree"], "invalid choice"),
    "generate density": (["generate", "g", "--kind", "biclustering", "--density", "0"], "--density"),
    "generate overlap": (["generate", "g", "--kind", "biclustering", "--overlap", "2", "--layout", "blocks"], "--overlap"),
    "generate out a file": (["generate", "{s}/file.zarr"], "exists and is not a folder"),
    "generate over stores": (["generate", "{s}/gen"], "already exists; pass --overwrite"),
    "convert no input": (["convert", "o.zarr"], "needs exactly one of"),
    "convert missing file": (["convert", "o.zarr", "--rows", "a.npy", "--cols", "b.npy"], "no such file"),
    "convert rows without cols": (["convert", "o.zarr", "--rows", "{s}/labels.npy"], "needs both --rows FILE and --cols FILE"),
    "convert two forms": (["convert", "o.zarr", "--rows", "{s}/labels.npy", "--cols", "{s}/cols.npy", "--biclusters", "{s}/idx.json"], "needs exactly one of"),
    "convert not numpy": (["convert", "o.zarr", "--rows", "{s}/text.npy", "--cols", "{s}/cols.npy"], "text.npy"),
    "convert csv column missing": (["convert", "o.zarr", "--rows", "{s}/labels.csv:c", "--cols", "{s}/cols.npy"], "labels.csv"),
    "convert JSON broken": (["convert", "o.zarr", "--biclusters", "{s}/bad.json", "--shape", "4", "3"], "bad.json"),
    "convert mask not 0/1": (["convert", "o.zarr", "--row-mask", "{s}/mask2.npy", "--col-mask", "{s}/mask2.npy"], "boolean"),
    "convert over a store": (["convert", "{s}/t.zarr", "--rows", "{s}/labels.npy", "--cols", "{s}/cols.npy"], "already exists"),
    "convert inside a store": (["convert", "{s}/t.zarr/x.zarr", "--rows", "{s}/labels.npy", "--cols", "{s}/cols.npy"], "inside the Zarr store"),
    "tradeoff bad suffix": (["tradeoff", "t.zarr", "s.zarr", "--plot", "fig.bmp"], "use a .png, .svg or .pdf suffix"),
    "tradeoff missing folder": (["tradeoff", "t.zarr", "s.zarr", "--plot", "nowhere/fig.png"], "does not exist"),
    "tradeoff lam": (["tradeoff", "t.zarr", "s.zarr", "--lam", "2"], "--lam must be in [0, 1]"),
    "tradeoff truth of several biclusters": (["tradeoff", "{s}/t.zarr", "{s}/b.zarr"], "choose it with"),
    "tradeoff unknown index": (["tradeoff", "{s}/b.zarr", "{s}/b.zarr", "--index", "cosine"], "invalid choice"),
    "tradeoff target unknown": (["tradeoff", "{s}/b.zarr", "{s}/b.zarr", "--truth-bicluster", "99"], "99"),
    "batch manifest missing": (["batch", "none.toml"], "cannot read manifest"),
    "batch manifest syntax": (["batch", "{s}/syntax.toml"], "invalid TOML"),
    "batch manifest not UTF-8": (["batch", "{s}/latin1.toml"], "is not UTF-8 text"),
    "batch unknown key": (["batch", "{s}/unknown_key.toml"], "line 8: unknown key 'colour'"),
    "batch unknown group": (["batch", "{s}/unknown_group.toml"], "pred 'q' is not defined"),
    "batch glob matches nothing": (["batch", "{s}/glob_nothing.toml"], "matches nothing"),
    "batch results a number": (["batch", "{s}/results_number.toml"], "line 1: results must be the path"),
    "batch params without measures": (["batch", "{s}/params_alone.toml"], "params needs an explicit measures list"),
    "batch unassigned policy": (["batch", "{s}/policy.toml"], "unassigned must be one of"),
    "batch unknown measure": (["batch", "{s}/measure_unknown.toml"], "unknown measure 'carri'"),
    "batch measure of another kind": (["batch", "{s}/measure_kind.toml"], "needs co-clusterings"),
    "batch param of the wrong type": (["batch", "{s}/param_type.toml"], "parameter beta must be a number in (0, inf), got 'big'"),
    "batch no pairs": (["batch", "{s}/no_pairs.toml"], "no [[pairs]] table"),
    "batch pairs not tables": (["batch", "{s}/pairs_not_tables.toml"], "pairs must be an array of tables"),
    "batch local scheduler": (["batch", "{s}/ok.toml", "--scheduler", "threads"], "batch runs on a Dask cluster"),
    "batch results corrupt": (["batch", "{s}/ok.toml", "--results", "{s}/corrupt.sqlite"], "not a usable SQLite results file"),
    "batch results a folder": (["batch", "{s}/ok.toml", "--results", "{s}/folder.sqlite"], "is a folder"),
    "batch results from the future": (["batch", "{s}/ok.toml", "--results", "{s}/future.sqlite"], "newer daskbicl"),
    "batch results of another program": (["batch", "{s}/ok.toml", "--results", "{s}/foreign.sqlite"], "daskbicl did not write"),
    "batch results folder missing": (["batch", "{s}/ok.toml", "--results", "{s}/nowhere/r.sqlite"], "does not exist"),
    "results file missing": (["results", "none.sqlite"], "no such results file"),
    "results file corrupt": (["results", "{s}/corrupt.sqlite"], "not a usable SQLite results file"),
    "results file a folder": (["results", "{s}/folder.sqlite"], "is a folder"),
    "results file of another program": (["results", "{s}/foreign.sqlite"], "daskbicl did not write"),
    "results parquet to stdout": (["results", "{s}/good.sqlite", "--format", "parquet"], "pass --output"),
    "results unknown measure": (["results", "{s}/good.sqlite", "--measure", "nce_typo"], "unknown measure 'nce_typo'"),
    "results latest and failures": (["results", "{s}/good.sqlite", "--latest", "--failures"], "not allowed with argument"),
    "results plot suffix": (["results", "{s}/good.sqlite", "--plot", "fig.gif"], "use a .png, .svg or .pdf suffix"),
    "results output folder missing": (["results", "{s}/good.sqlite", "--output", "nowhere/x.csv"], "cannot write nowhere/x.csv"),
    "demo noise": (["demo", "--noise", "2"], "--noise"),
}


@pytest.fixture(scope="module")
def generated(s):
    """A folder where `generate` has already written its stores (for the 'over stores' case)."""
    from daskbicl.cli import main

    assert main(["generate", str(s / "gen"), "--rows", "1000", "--cols", "100"]) == 0
    return s / "gen"


def run_cli(args, cwd: Path, capfd):
    """``daskbicl ARGS`` in this process (the error paths start no cluster); (status, stdout, stderr)."""
    from daskbicl.cli import main

    capfd.readouterr()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        code = main(args)
    except SystemExit as exc:  # argparse
        code = exc.code
    finally:
        os.chdir(old)
    out, err = capfd.readouterr()
    return code, out, err


@pytest.mark.parametrize("case", sorted(CLI_CASES))
def test_cli_bad_input(case, s, generated, tmp_path, capfd):
    args, message = CLI_CASES[case]
    args = [a.replace("{s}", str(s)) for a in args]
    message = message.replace("{s}", str(s))
    before, stores_before = listing(tmp_path), listing(s)
    code, out, err = run_cli(args, tmp_path, capfd)
    assert code == 2, (code, out, err)
    lines = [line for line in err.splitlines() if line.startswith("daskbicl: error:")]
    assert len(lines) == 1 and message in lines[0], err
    assert "Traceback" not in err and "Warning" not in err, err
    assert listing(tmp_path) == before and listing(s) == stores_before  # nothing half-written


def test_cli_cases_run_as_processes_too(s, tmp_path):
    """A sample of the catalogue as real processes: exit 2, one line, no traceback, no warning."""
    for case in ("score chunk truncated", "batch unknown key", "convert not numpy", "generate rows 1e12"):
        args, message = CLI_CASES[case]
        proc = subprocess.run([sys.executable, "-m", "daskbicl", *(a.replace("{s}", str(s)) for a in args)],
                              capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert proc.returncode == 2, (case, proc.stderr)
        assert proc.stderr.count("\n") == 1 and message.replace("{s}", str(s)) in proc.stderr, (case, proc.stderr)
    assert os.listdir(tmp_path) == []


def test_cli_with_stdout_closed(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "daskbicl", "measures"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, timeout=60,
                          preexec_fn=lambda: os.close(1))
    assert proc.returncode == 2 and "standard output is closed" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_results_file_locked_by_another_run(s, capfd, tmp_path):
    """Another process holds the run lock: one line, exit 3 (retry later), and the lock is the file's, whatever
    the path."""
    os.symlink(s / "good.sqlite", tmp_path / "link.sqlite")
    with open(f"{s / 'good.sqlite'}.lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        for path in (s / "good.sqlite", tmp_path / "link.sqlite"):
            code, out, err = run_cli(["batch", str(s / "ok.toml"), "--results", str(path)], tmp_path, capfd)
            assert code == 3 and err.count("daskbicl: error:") == 1, err
            assert "another daskbicl batch is using" in err and "Traceback" not in err


def test_sql_looking_names_are_data(tmp_path):
    """Group names, paths and filters that look like SQL are stored and matched as text."""
    daskbicl.save(daskbicl.partition(*[np.arange(40) % 3, np.arange(5) % 2]), tmp_path / "x'); DROP TABLE scores;--.zarr")
    (tmp_path / "m.toml").write_text(
        "[truth]\n\"t'; DROP TABLE runs;--\" = \"x'); DROP TABLE scores;--.zarr\"\n"
        "[pred]\n\"p\\\" OR 1=1\" = \"x'); DROP TABLE scores;--.zarr\"\n"
        "[[pairs]]\ntruth = \"t'; DROP TABLE runs;--\"\npred = \"p\\\" OR 1=1\"\nmeasures = [\"cari\"]\n")
    manifest = load_manifest(tmp_path / "m.toml")
    assert len(manifest.pairs) == 1
    with ResultsDB(tmp_path / "r.sqlite") as db:
        run_id = db.start_run("m", 1)
        truth, pred = next(iter(manifest.pairs))
        pair = Pair(truth, pred, "fp", "fp", manifest.name(truth, "truth"), manifest.name(pred, "pred"))
        db.record_pair(pair, [("cari", "{}", 1.0, 1)], run_id=run_id)
        assert db.scores(pred=["*' OR '1'='1"]) == []
        assert len(db.scores(pred=[str(tmp_path / "x'); DROP TABLE scores;--.zarr")])) == 1
        assert db.observations([run_id])[0]["pred_name"] == "p\" OR 1=1/x'); DROP TABLE scores;--.zarr"
        assert {"scores", "runs", "failures"} <= {r[0] for r in db.conn.execute("SELECT name FROM sqlite_master")}


def test_the_catalogue_covers_at_least_100_classes():
    from . import test_failures

    classes = set(API_CASES) | {f"cli: {c}" for c in CLI_CASES} | set(test_failures.ENVIRONMENT)
    assert len(classes) >= 100, len(classes)


def test_damage_list_is_in_the_catalogue():
    """Every way tests/damaged.py damages a store has a catalogue case."""
    source = Path(__file__).read_text()
    for name in DAMAGE:
        assert f'"{name}.zarr"' in source or f"/{name}.zarr" in source, name
