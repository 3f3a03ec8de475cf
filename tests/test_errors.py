"""Every bad input gets a specific DaskbiclError (after sklearn's
test_error_messages_on_wrong_input): each case is run through ``score`` and
through every generated measure function, and must give the same message."""

from __future__ import annotations

import dask.array as da
import numpy as np
import pandas as pd
import pytest
import xarray as xr
import zarr

import daskbicl
from daskbicl.errors import (
    AlignmentError,
    DaskbiclError,
    InputError,
    LabelError,
    MeasureError,
    StoreError,
)

GOOD = (np.array([0, 0, 1, 1]), np.array([0, 1, 1]))
PARTITION = sorted(n for n, m in daskbicl.MEASURES.items() if m.family == "partition")


def _objects(values: list) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _bad(row=None, col=None):
    return (GOOD[0] if row is None else row, GOOD[1] if col is None else col)


CASES = {
    "nan labels": (_bad(row=np.array([0.0, np.nan, 1.0, 1.0])), LabelError,
                   "pred row_labels has 1 unassigned entry (NaN, None, pandas NA or a negative integer)"),
    "negative label": (_bad(row=np.array([0, -3, 1, 1])), LabelError, "pred row_labels has 1 unassigned entry"),
    "negative label in a dask chunk": (
        _bad(col=da.from_array(np.array([0, 1, -1]), chunks=1)), LabelError, "pred col_labels has 1 unassigned entry"),
    "unhashable labels": (_bad(row=_objects([[0], [1], [0], [1]])), LabelError,
                          "pred row_labels holds a value that cannot be a label (labels must be hashable)"),
    "raw record labels": (_bad(row=np.zeros(4, dtype="V3")), LabelError, "(raw records), which cannot hold labels"),
    "empty list axis": (_bad(row=[]), InputError, "empty 'row' axis"),
    "pandas NA label": (_bad(row=pd.array([0, None, 1, 1], dtype="Int64")), LabelError,
                        "pred row_labels has 1 unassigned entry"),
    "different lengths": (_bad(row=np.array([0, 1, 1])), AlignmentError, "truth has 4 rows but pred has 3"),
    "empty axis": (_bad(col=np.array([], dtype=np.int64)), InputError, "empty 'col' axis"),
    "2-D labels": (_bad(row=np.zeros((2, 2), dtype=np.int64)), InputError, "must be 1-D"),
    "wrong tuple length": ((GOOD[0],), InputError, "must be (row_labels, col_labels), got 1 items"),
    "not a dataset": (42, InputError, "got int"),
    "wrong variable names": (xr.Dataset({"z": ("row", GOOD[0]), "w": ("col", GOOD[1])}), InputError,
                             "expected variables 'row_labels' and 'col_labels'"),
    "wrong dimension names": (xr.Dataset({"row_labels": ("x", GOOD[0]), "col_labels": ("col", GOOD[1])}),
                              InputError, "must have dimensions ('row',), got ('x',)"),
    "missing path": ("/nonexistent/truth.zarr", StoreError, "no such file or directory"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_pred_gives_specific_error(case):
    pred, exc, message = CASES[case]
    with pytest.raises(exc, match=_escape(message)):
        daskbicl.score(GOOD, pred)


@pytest.mark.parametrize("name", PARTITION)
@pytest.mark.parametrize("case", ["negative label", "unhashable labels", "different lengths", "missing path"])
def test_every_measure_function_gives_the_same_message(name, case):
    pred, exc, message = CASES[case]
    with pytest.raises(exc, match=_escape(message)):
        getattr(daskbicl, name)(GOOD, pred)


def test_errors_name_the_side():
    with pytest.raises(LabelError, match="truth row_labels"):
        daskbicl.score(_bad(row=np.array([0, -1, 1, 1])), GOOD)
    with pytest.raises(LabelError, match="pred col_labels"):
        daskbicl.score(GOOD, _bad(col=np.array([0, -1, 1])))


def test_coordinates_that_do_not_match_say_how_many():
    truth = daskbicl.partition(*GOOD, row=["a", "b", "c", "d"])
    pred = daskbicl.partition(*GOOD, row=["a", "b", "x", "y"])
    with pytest.raises(AlignmentError) as info:
        daskbicl.score(truth, pred)
    text = str(info.value)
    assert "2 of truth's 4 rows are missing from pred" in text
    assert "2 of pred's 4 rows are missing from truth" in text
    assert "'c'" in text and "'x'" in text


def test_duplicated_coordinates():
    with pytest.raises(AlignmentError, match="1 duplicated 'row' coordinate labels"):
        daskbicl.partition(*GOOD, row=["a", "a", "c", "d"])


def test_not_a_daskbicl_store(tmp_path):
    zarr.open_group(str(tmp_path / "plain.zarr"), mode="w").create_array("x", shape=(3,), dtype="i8")
    with pytest.raises(StoreError, match=r"not a co-clustering or biclustering store.*found arrays \['x'\]"):
        daskbicl.score(str(tmp_path / "plain.zarr"), GOOD)
    (tmp_path / "file.zarr").write_text("hello")
    with pytest.raises(StoreError, match=r"is a file but not a NetCDF file .*daskbicl convert"):
        daskbicl.open(tmp_path / "file.zarr")
    (tmp_path / "emptydir").mkdir()
    with pytest.raises(StoreError, match="not a readable Zarr store"):
        daskbicl.open(tmp_path / "emptydir")


def test_unknown_measure_and_parameter():
    with pytest.raises(MeasureError, match="unknown measure 'car'. Did you mean 'cari'"):
        daskbicl.score(GOOD, GOOD, measures=["car"])
    with pytest.raises(MeasureError, match="unknown parameter"):
        daskbicl.score(GOOD, GOOD, measures=["cari"], beta=2.0)
    with pytest.raises(MeasureError, match="measures is empty"):
        daskbicl.score(GOOD, GOOD, measures=[])


def test_every_error_is_a_daskbicl_error():
    for case, (_, exc, _) in CASES.items():
        assert issubclass(exc, DaskbiclError), case


def _escape(text):
    import re

    return re.escape(text)


def test_pandas_nullable_integers_without_missing_values_are_labels():
    got = daskbicl.score((pd.array([0, 0, 1, 1], dtype="Int64"), pd.Series([0, 1, 1])), GOOD, measures=["cari"])
    assert got == {"cari": 1.0}


def test_unknown_chunk_sizes_are_named():
    z = da.from_array(np.array([0, 0, 1, 1]), chunks=2)
    z = z[z >= 0]  # unknown chunk sizes
    with pytest.raises(AlignmentError, match="unknown number of rows.*compute_chunk_sizes"):
        daskbicl.score((z, GOOD[1]), GOOD)


def test_partition_with_duplicated_coordinates_names_the_call():
    with pytest.raises(AlignmentError, match=r"partition\(\) has 1 duplicated 'row'"):
        daskbicl.partition([0, 1, 1], [0], row=["a", "b", "a"])


@pytest.mark.parametrize("cls", [c for c in vars(daskbicl.errors).values()
                                 if isinstance(c, type) and issubclass(c, DaskbiclError)])
def test_errors_survive_the_trip_back_from_a_worker(cls):
    """distributed pickles worker exceptions with tblib's support installed."""
    import pickle

    import tblib.pickling_support

    tblib.pickling_support.install()
    back = pickle.loads(pickle.dumps(cls("what went wrong")))
    assert type(back) is cls and str(back) == "what went wrong"
