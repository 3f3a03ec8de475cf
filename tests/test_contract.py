"""One contract, generated from the registry: every parameter of every measure works alike through every door.

For each parameter the registry declares, a valid non-default value (in
every spelling a user may write it: ``0.5`` and ``"0.5"``, ``True``, ``1``
and ``"yes"``, ``"max"`` and ``"MAX"``) gives the same score through

* Python (:func:`daskbicl.score` and the ``Dataset.bicl`` accessor),
* the command line (``python3 -m daskbicl score ... --json``, a subprocess), and
* a batch manifest (``params = {...}``, run on the session's LocalCluster,
  read back from the SQLite results),

and every invalid value gets the same message from all three.  Nothing here
names a measure or a parameter: the cases come from the records, so a new
measure or parameter is tested the day it is registered.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

import daskbicl
from daskbicl import cli
from daskbicl.batch import ManifestError, ResultsDB, load_manifest, run_batch
from daskbicl.measures import REGISTRY, Boolean, Interval, OneOf

# --------------------------------------------------------------------------- cases from the records


def _params() -> dict:
    """Parameter name -> (Param, [measures declaring it]), from the registry."""
    out: dict = {}
    for m in REGISTRY.values():
        for name, p in m.params.items():
            out.setdefault(name, (p, []))[1].append(m)
    return out


PARAMS = _params()


def valid_values(p) -> list:
    """Non-default values the constraint accepts, canonical."""
    c = p.constraint
    if isinstance(c, Boolean):
        return [not p.default]
    if isinstance(c, OneOf):
        return [o for o in c.options if o != p.default]
    assert isinstance(c, Interval)
    lo = c.low if math.isfinite(c.low) else -1.0
    hi = c.high if math.isfinite(c.high) else lo + 4.0
    return [v for v in (lo + (hi - lo) / 8, lo + (hi - lo) * 3 / 4) if v != p.default]


def spellings(p, value) -> list:
    """Ways a user writes ``value`` (Python, TOML or shell); each must mean ``value``."""
    c = p.constraint
    if isinstance(c, Boolean):
        return [value, int(value), "yes" if value else "no", "TRUE" if value else "False"]
    if isinstance(c, OneOf):
        return [value, value.upper(), f" {value.title()} "]
    return [value, repr(value), f" {value!r} "]


def invalid_values(p) -> list:
    c = p.constraint
    if isinstance(c, Boolean):
        return [2, "maybe"]
    if isinstance(c, OneOf):
        return ["bogus", 3]
    assert isinstance(c, Interval)
    return ["x", (c.low - 1) if math.isfinite(c.low) else (c.high + 1)]


SETTINGS = [(name, v) for name, (p, _) in sorted(PARAMS.items()) for v in valid_values(p)]
INVALID = [(name, v) for name, (p, _) in sorted(PARAMS.items()) for v in invalid_values(p)]


def test_every_parameter_is_covered():
    assert SETTINGS and len({name for name, _ in SETTINGS}) == len(PARAMS)
    for name, (p, _) in PARAMS.items():
        for value in valid_values(p):  # the generated values are valid, non-default and canonical
            assert p.validate(name, value) == value != p.default
        for value in invalid_values(p):
            with pytest.raises(daskbicl.MeasureError):
                p.validate(name, value)


# --------------------------------------------------------------------------- inputs


def _biclustering(rng, k, rows=40, cols=30):
    row_mask = rng.random((k, rows)) < 0.35
    col_mask = rng.random((k, cols)) < 0.35
    row_mask[:, 0] = col_mask[:, 0] = True  # no empty bicluster
    return daskbicl.biclustering(row_mask, col_mask)


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """Two pairs of real Zarr stores: co-clusterings and (overlapping) biclusterings."""
    rng = np.random.default_rng(25)
    out = tmp_path_factory.mktemp("contract")
    data = {
        "partition": (daskbicl.partition(rng.integers(0, 4, 50), rng.integers(0, 3, 20)),
                      daskbicl.partition(rng.integers(0, 5, 50), rng.integers(0, 3, 20))),
        "biclustering": (_biclustering(rng, 3), _biclustering(rng, 4)),
    }
    paths = {}
    for kind, (truth, pred) in data.items():
        paths[kind] = (daskbicl.save(truth, out / f"{kind}-truth.zarr"), daskbicl.save(pred, out / f"{kind}-pred.zarr"))
    return paths


def _kind(measure) -> str:
    kinds = daskbicl.measures.PROVIDERS[measure.provider].kinds
    return "partition" if "biclustering" not in kinds else "biclustering"


def _groups(name):
    """The measures declaring ``name``, grouped by the input kind they score."""
    groups: dict = {}
    for m in PARAMS[name][1]:
        groups.setdefault(_kind(m), []).append(m.name)
    return groups


def _python(stores, kind, measures, params):
    truth, pred = stores[kind]
    return daskbicl.score(truth, pred, measures=measures, **params)


def _bits(value):
    """A score compared bit for bit: records as dicts, nan (an undefined score) as one token."""
    if hasattr(value, "_asdict"):
        return {k: _bits(v) for k, v in value._asdict().items()}
    return "nan" if isinstance(value, float) and math.isnan(value) else value


def _same(a, b):
    assert set(a) == set(b)
    for k in a:
        assert _bits(a[k]) == _bits(b[k]), k  # bit for bit: the same canonical parameters reach the same code


# --------------------------------------------------------------------------- valid values


@pytest.mark.parametrize("name, value", SETTINGS, ids=[f"{n}={v}" for n, v in SETTINGS])
def test_python_spellings_and_accessor_agree(stores, name, value):
    p = PARAMS[name][0]
    for kind, measures in _groups(name).items():
        expected = _python(stores, kind, measures, {name: value})
        for spelled in spellings(p, value):
            _same(_python(stores, kind, measures, {name: spelled}), expected)
        truth = daskbicl.open(stores[kind][0])  # the accessor
        _same(truth.bicl.score(stores[kind][1], measures=measures, **{name: spelled}), expected)
        for m in measures:  # the generated per-measure function takes it too
            one = getattr(daskbicl, m)(*stores[kind], **{name: spellings(p, value)[-1]})
            assert _bits(one) == _bits(expected[m])


def test_non_default_values_change_some_score(stores):
    """The values reach the finalize functions: each number and word parameter moves some score."""
    for name, (p, _) in PARAMS.items():
        if isinstance(p.constraint, Boolean):
            continue  # clip and drop_empty only act on negative values and empty biclusters
        moves = {}
        for value in valid_values(p):
            moved = False
            for kind, measures in _groups(name).items():
                a = _python(stores, kind, measures, {name: value})
                b = _python(stores, kind, measures, {})
                moved |= any(a[k] != b[k] for k in a)
            moves[value] = moved
        if getattr(p, "provider", False):
            # how a value is computed (MOCICE-BCubed's method): "exact" equals the default "auto" wherever
            # the exact cost fits, so some value, not every value, must move a score
            assert any(moves.values()), f"no value of {name} changes a score: {moves}"
        else:
            for value, moved in moves.items():
                assert moved, f"{name}={value} changes no score"


def _rounds() -> list[dict]:
    """The settings in a few command lines: round i sets every parameter to its i-th non-default value.

    One ``daskbicl score`` per round and input kind (a subprocess costs
    seconds), each compared with Python given the same parameters.
    """
    values = {name: valid_values(p) for name, (p, _) in PARAMS.items()}
    return [{name: vs[i % len(vs)] for name, vs in values.items()} for i in range(max(map(len, values.values())))]


def _shell_text(p, value) -> str:
    """How a user types ``value`` in a shell: the last spelling (``" Max "``, ``"no"``, ``" 0.5 "``)."""
    return str(spellings(p, value)[-1 if not isinstance(p.constraint, Boolean) else 2])


@pytest.mark.parametrize("round_", range(len(_rounds())))
@pytest.mark.parametrize("kind", ["partition", "biclustering"])
def test_cli_gives_the_python_score(stores, kind, round_):
    setting = _rounds()[round_]
    measures = sorted({m.name for name in setting for m in PARAMS[name][1] if _kind(m) == kind})
    params = {name: value for name, value in setting.items() if any(_kind(m) == kind for m in PARAMS[name][1])}
    args = [sys.executable, "-m", "daskbicl", "score", *stores[kind], "--json", "--workers", "0", "--measures",
            *measures]
    for name, value in params.items():
        args += ["--param", f"{name}={_shell_text(PARAMS[name][0], value)}"]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    expected = cli.jsonable(_python(stores, kind, measures, params))
    assert json.loads(proc.stdout) == expected


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


def _manifest(stores, cases) -> str:
    lines = []
    for role in ("truth", "pred"):
        lines.append(f"[{role}]")
        lines += [f'{kind} = "{paths[0 if role == "truth" else 1]}"' for kind, paths in stores.items()]
    for kind, measures, name, value in cases:
        lines += ["[[pairs]]", f'truth = "{kind}"', f'pred = "{kind}"',
                  f"measures = {json.dumps(measures)}", f"params = {{ {name} = {_toml(value)} }}"]
    return "\n".join(lines) + "\n"


def test_manifest_gives_the_python_score_and_stores_canonical_params(stores, tmp_path, client):
    """Every setting in one manifest (each in a TOML type and as text), run on the LocalCluster."""
    cases = []
    for name, value in SETTINGS:
        p = PARAMS[name][0]
        for spelled in dict.fromkeys(map(str, spellings(p, value)[:2])).keys():
            typed = spellings(p, value)[[str(s) for s in spellings(p, value)].index(spelled)]
            for kind, measures in _groups(name).items():
                cases.append((kind, measures, name, typed))
    manifest = tmp_path / "contract.toml"
    manifest.write_text(_manifest(stores, cases))
    report = run_batch(str(manifest), str(tmp_path / "scores.sqlite"), client=client)
    assert report.failed == 0 and not report.failures, report.failures
    with ResultsDB(str(tmp_path / "scores.sqlite")) as db:
        rows = db.scores()
    stored = {(r["pred"], r["measure"], r["params"]): r["value"] for r in rows}
    for kind, measures, name, typed in cases:
        expected = _python(stores, kind, measures, {name: typed})
        for m in measures:
            full = REGISTRY[m].validate_params({name: typed})
            key = json.dumps(full, sort_keys=True, separators=(",", ":"))
            value = expected[m]
            fields = value._asdict() if hasattr(value, "_asdict") else {None: value}
            for field, v in fields.items():
                measure = m if field is None else f"{m}.{field}"
                got = stored[(stores[kind][1], measure, key)]
                assert (got is None and not math.isfinite(v)) or got == v, (measure, key)
    # A second run finds every score under its canonical parameters: nothing is re-scored.
    again = run_batch(str(manifest), str(tmp_path / "scores.sqlite"), client=client)
    assert (again.scored, again.skipped, again.failed) == (0, again.pairs, 0)


# --------------------------------------------------------------------------- invalid values


def _python_message(kind, stores, measures, name, value) -> str:
    with pytest.raises(daskbicl.DaskbiclError) as err:
        _python(stores, kind, measures, {name: value})
    return str(err.value)


@pytest.mark.parametrize("name, value", INVALID, ids=[f"{n}={v}" for n, v in INVALID])
def test_invalid_value_same_message_everywhere(stores, tmp_path, capsys, name, value):
    kind, measures = next(iter(_groups(name).items()))
    message = _python_message(kind, stores, measures, name, value)
    assert name in message
    # The CLI types the shell text as TOML would (an integer, a number or a word): the same value.
    assert cli.main(["score", *stores[kind], "--workers", "0", "--measures", *measures,
                     "--param", f"{name}={value}"]) == 2
    assert capsys.readouterr().err.strip() == f"daskbicl: error: {message}"
    manifest = tmp_path / "bad.toml"
    manifest.write_text(_manifest(stores, [(kind, measures, name, value)]))
    with pytest.raises(ManifestError) as err:
        load_manifest(str(manifest))
    assert str(err.value).endswith(f"line {len(manifest.read_text().splitlines())}: {message}")


def test_invalid_value_through_a_real_subprocess(stores):
    name, value = INVALID[0]
    kind, measures = next(iter(_groups(name).items()))
    message = _python_message(kind, stores, measures, name, value)
    proc = subprocess.run([sys.executable, "-m", "daskbicl", "score", *stores[kind], "--measures", *measures,
                           "--param", f"{name}={value}"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.strip() == f"daskbicl: error: {message}"
    assert "Traceback" not in proc.stderr


def test_bad_parameters_fail_before_any_input_is_opened(tmp_path):
    """No store is opened for a request the records refuse: missing stores are not even noticed."""
    missing = str(tmp_path / "missing.zarr")
    for name, value in INVALID:
        with pytest.raises(daskbicl.MeasureError):
            daskbicl.score(missing, missing, **{name: value})
    with pytest.raises(daskbicl.MeasureError, match="unknown parameter"):
        daskbicl.score(missing, missing, no_such_parameter=1)
    with pytest.raises(daskbicl.InputError, match="unassigned must be one of"):
        daskbicl.score(missing, missing, unassigned="drop")
    with pytest.raises(daskbicl.InputError, match="dense_cells"):
        daskbicl.contingency(missing, missing, dense_cells="many")
    with pytest.raises(daskbicl.InputError, match="number of null draws"):
        daskbicl.null(missing, missing, n=0)
    with pytest.raises(daskbicl.InputError, match="seed"):
        daskbicl.null(missing, missing, n=9, seed=-1)
    with pytest.raises(daskbicl.InputError, match="drop_empty"):
        daskbicl.tradeoff(missing, missing, drop_empty="perhaps")


# --------------------------------------------------------------------------- what the results key must hold


def _beta_manifest(stores, betas, path):
    """One pair scored with fmeasure at each beta (as text, so canonicalisation is on the way)."""
    kind = "biclustering"
    path.write_text(_manifest(stores, [(kind, ["fmeasure"], "beta", str(b)) for b in betas]))
    return str(path)


def test_rerun_scores_a_measure_whose_parameter_value_changed(stores, tmp_path, client):
    db = str(tmp_path / "beta.sqlite")
    first = run_batch(_beta_manifest(stores, [0.5], tmp_path / "a.toml"), db, client=client)
    assert (first.scored, first.failed) == (1, 0)
    same = run_batch(_beta_manifest(stores, ["0.50"], tmp_path / "b.toml"), db, client=client)  # same value, spelled anew
    assert (same.scored, same.skipped) == (0, 1)
    changed = run_batch(_beta_manifest(stores, [2.0], tmp_path / "c.toml"), db, client=client)
    assert (changed.scored, changed.skipped) == (1, 0)
    with ResultsDB(db) as results:
        rows = results.scores(measure=["fmeasure"])
    betas = sorted(json.loads(r["params"])["beta"] for r in rows)
    assert betas == [0.5, 2.0]
    truth, pred = stores["biclustering"]
    for r in rows:
        assert r["value"] == daskbicl.fmeasure(truth, pred, beta=json.loads(r["params"])["beta"])


def test_results_latest_keeps_one_row_per_parameter_set(stores, tmp_path, client, capsys):
    """``results --latest`` keys on the parameters too: two betas of one measure are two latest rows."""
    db = str(tmp_path / "latest.sqlite")
    run_batch(_beta_manifest(stores, [0.5, 2.0], tmp_path / "two.toml"), db, client=client)
    run_batch(_beta_manifest(stores, [0.5, 2.0], tmp_path / "two.toml"), db, client=client, force=True)
    assert cli.main(["results", db, "--latest", "--format", "json", "--measure", "fmeasure"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert sorted(r["params"]["beta"] for r in rows) == [0.5, 2.0]  # the JSON export holds parameters as an object
    assert len(rows) == 2  # and the forced rerun's rows replaced the first run's, not added to them


# --------------------------------------------------------------------------- tradeoff's bounds

BAD_BOUNDS = ["abc", "", 1.5, -0.1, float("nan"), float("inf"), True, [0.5]]


@pytest.mark.parametrize("option", ["pre_min", "rec_min"])
@pytest.mark.parametrize("value", BAD_BOUNDS, ids=repr)
def test_tradeoff_bounds_refused_before_any_input_is_opened(tmp_path, option, value):
    """Missing stores are not even noticed: the bound is refused first, the same way by every function."""
    missing = str(tmp_path / "missing.zarr")
    want = f"{option} must be a number from 0 to 1 (or None for no bound), got {value!r}"
    with pytest.raises(daskbicl.InputError) as err:
        daskbicl.tradeoff(missing, missing, **{option: value})
    assert str(err.value) == want
    for call in (lambda: daskbicl.optimal_tradeoff([0.5], [0.5], **{option: value}),
                 lambda: daskbicl.compare_algorithms({"A": ([0.5], [0.5])}, **{option: value})):
        with pytest.raises(daskbicl.InputError) as err:
            call()
        assert str(err.value) == want


@pytest.mark.parametrize("value", ["abc", "1.5", "-0.1", "nan"])
def test_tradeoff_bounds_on_the_command_line(tmp_path, capsys, value):
    missing = str(tmp_path / "missing.zarr")
    for option in ("pre_min", "rec_min"):
        assert cli.main(["tradeoff", missing, missing, f"--{option.replace('_', '-')}", value]) == 2
        assert capsys.readouterr().err.strip() == (
            f"daskbicl: error: {option} must be a number from 0 to 1 (or None for no bound), got {value!r}")


def test_tradeoff_bounds_are_canonical_through_every_door(stores, capsys):
    """'0.15', ' 0.15 ' and 0.15 keep the same results, in Python and on the command line; "0" keeps all."""
    truth, sweep = stores["biclustering"]
    every = daskbicl.tradeoff(truth, sweep, truth_bicluster=0, rec_min="0", pre_min=0, names=["alg"])
    assert every.results["kept"].all() and (every.rec_min, every.pre_min) == (0.0, 0.0)
    want = every.results.loc[every.results["rec"] >= 0.15, "result"].tolist()
    assert 0 < len(want) < len(every.results)  # the bound matters on these stores
    for spelling in (0.15, "0.15", " 0.15 "):
        t = daskbicl.tradeoff(truth, sweep, truth_bicluster=0, rec_min=spelling, names=["alg"])
        assert t.rec_min == 0.15 and t.results.loc[t.results["kept"], "result"].tolist() == want
    assert cli.main(["tradeoff", truth, sweep, "--truth-bicluster", "0", "--name", "alg", "--rec-min", " 0.15",
                     "--json", "--workers", "0"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["constraints"] == {"pre_min": None, "rec_min": 0.15}


# --------------------------------------------------------------------------- the records themselves


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_a_parameter_default_is_written_once_in_its_param(name):
    """``finalize`` (and ``shared``) receive every parameter resolved from the ``Param``: no second default."""
    import inspect

    measure = REGISTRY[name]
    for func in filter(None, (measure.finalize, measure.shared)):
        signature = inspect.signature(func).parameters
        repeated = [p for p in measure.params if p in signature and signature[p].default is not inspect.Parameter.empty]
        assert not repeated, f"{name}: {func.__qualname__} repeats the default of {repeated}"


def test_tradeoff_index_names_ignore_case_like_measure_names(stores, tmp_path):
    truth, sweep = stores["biclustering"]
    want = daskbicl.tradeoff(truth, sweep, truth_bicluster=0, index="jaccard", names=["alg"])
    got = daskbicl.tradeoff(truth, sweep, truth_bicluster=0, index=" Jaccard ", names=["alg"])
    assert got.index == "jaccard" and got.optimal["alg"].auc == want.optimal["alg"].auc
    assert got.for_index("FMEASURE").index == "fmeasure"
    assert daskbicl.optimal_tradeoff([0.5, 0.9], [0.8, 0.2], index="Kulczynski").index == "kulczynski"
    missing = str(tmp_path / "missing.zarr")
    with pytest.raises(daskbicl.MeasureError, match="unknown index 'dice'; choose one of"):
        daskbicl.tradeoff(missing, missing, index="Dice")  # refused before the missing stores are noticed
