"""The batch manifest: which pred stores are scored against which truth stores, and how.

A manifest is a TOML file::

    results = "scores.sqlite"              # optional; default: <manifest name>.sqlite beside it

    [truth]                                # name = path, URL or glob (or a list of them)
    sim = "data/truth.zarr"

    [pred]
    nmf = "runs/nmf-*.zarr"
    lbm = ["runs/lbm-*.zarr", "s3://bucket/lbm/run-*.zarr"]

    [[pairs]]                              # every pred of these groups against every truth of these
    truth = "sim"
    pred = ["nmf", "lbm"]
    measures = ["cari", "nce"]             # optional: default, every measure that applies
    params = { }                           # optional: measure parameters (needs `measures`)
    unassigned = "cluster"                 # optional: "error" (default), "cluster" or "singleton"

    [storage_options]                      # optional: fsspec options for URLs (anon = true, ...)

    [run]                                  # optional: tags recorded with every run (strings, numbers)
    model = "nmf-2.1"

Every store has a *name*: ``group/folder`` (``runs/nmf-3.zarr`` of group
``nmf`` is ``nmf/nmf-3.zarr``).  The results are kept by these names and the
stores' content fingerprints, never by absolute paths, so moving the data
folder with its manifest rescores nothing and keeps one history.

Relative paths and globs are relative to the manifest's folder (so a cron job
may run from anywhere); ``~`` is expanded; ``file://`` URLs are local paths.
A glob selects folders locally and any matching prefix for URLs (through
fsspec).  A literal path is not checked here: a missing store is a failed
pair at run time, not a bad manifest.

Everything that can be checked without reading data is checked before any
work starts, and every problem is reported with its line: TOML syntax (from
:mod:`tomllib`), unknown keys, unknown group names, unknown measures,
parameters no listed measure accepts or of the wrong type or range (each
distinct request is run once on a tiny in-memory pair, so the measures' own
checks apply).  A glob that matches nothing is a warning for its group
(:attr:`Manifest.empty`; its group has no pair, the others are scored and
a pair a run saw before is reported missing, see
:mod:`~daskbicl.batch.runlog`); only when no pair is left at all is it a
manifest error.  :mod:`tomllib` reports no line
for such semantic errors, so :class:`_Locator` finds keys in the source text.
"""

from __future__ import annotations

import fnmatch
import glob
import os
from dataclasses import InitVar, dataclass, field

from ..errors import DaskbiclError, StorageUnavailableError, one_line, storage_unavailable
from ..io.storage import filesystem, waiting
from ..io.store import is_remote
from ..kernels.coclustering.contingency import DEFAULT_POLICY
from ..locations import redact
from ..measures import check_level, check_options, check_params, get, select_measures
from ..measures.bootstrap import check_method
from .pairing import FIELD as _FIELD
from .pairing import MATCHES, capture, paired
from .params import params_key, stored_params

try:  # Python >= 3.11
    import tomllib
except ImportError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["Manifest", "ManifestError", "Request", "load_manifest", "parse_manifest", "params_key", "stored_params"]

TOP_KEYS = ("results", "storage_options", "unassigned", "truth", "pred", "pairs", "run")
PAIR_KEYS = ("truth", "pred", "measures", "params", "unassigned", "match", "ci", "ci_method")

_MAGIC = set("*?[")


class ManifestError(DaskbiclError, ValueError):
    """The manifest is malformed; the message names the line of every problem."""

    def shell_message(self) -> str:
        return str(self)  # one line per problem, each naming its manifest line


@dataclass(frozen=True)
class Request:
    """The measures (None: all that apply), parameters and unassigned policy to score one pair with."""

    measures: tuple[str, ...] | None
    params: tuple[tuple[str, object], ...] = ()
    line: int = field(default=0, compare=False)
    unassigned: str = DEFAULT_POLICY
    checked: InitVar[bool] = False
    ci: float | None = None  # the manifest's ci: the level of the bootstrap intervals (bootstrap.check_level)
    ci_method: str = "bc"  # the manifest's ci_method: how the interval is read from the replicates

    def __post_init__(self, checked: bool = False):
        """Parameters and policy in their canonical form (``"PRINTED"`` is ``"printed"``, ``"0.5"`` is 0.5).

        A request built in Python then stores, and finds on the next run,
        the same parameters as one read from a manifest.  Values the checks
        refuse are kept as given: the run reports them (:meth:`resolve`).
        ``checked=True``: the parameters and policy are canonical already
        (the manifest checked each one, naming its line), so nothing is
        validated twice.
        """
        if checked:
            object.__setattr__(self, "params", tuple(sorted(self.params)))
            return
        params = tuple(sorted(self.params))
        try:
            selected = [get(name) for name in self.measures] if self.measures else None
            params = tuple(sorted(check_params(dict(params), selected).items()))
        except DaskbiclError:
            pass
        object.__setattr__(self, "params", params)
        try:
            object.__setattr__(self, "unassigned", check_options(unassigned=self.unassigned)["unassigned"])
            object.__setattr__(self, "ci_method", check_method(self.ci_method))
        except DaskbiclError:
            pass

    def resolve(self, kind_truth: str, kind_pred: str) -> list[tuple[object, dict]]:
        """``[(Measure, full parameter dict), ...]`` for inputs of these kinds, values canonical.

        Raises :class:`~daskbicl.MeasureError` when a measure does not apply
        to the kinds (e.g. ``cari`` on a biclustering) or a parameter is invalid.
        """
        selected = select_measures(list(self.measures) if self.measures else None, kind_truth, kind_pred)
        given = dict(self.params)
        return [(m, stored_params(m.validate_params(given), self.unassigned, self.ci, self.ci_method))
                for m in selected]


@dataclass
class Manifest:
    """A validated manifest with its globs expanded.

    ``pairs`` maps ``(truth, pred)`` store locations (absolute local paths or
    URLs) to the requests scored on that pair, in manifest order.
    ``source`` names the manifest in error messages (``source, line N: ...``).
    """

    path: str | None
    results: str | None
    storage_options: dict
    pairs: dict[tuple[str, str], tuple[Request, ...]]
    source: str = "manifest"
    #: (role, store location) -> its name in the manifest, ``group/folder`` (the first group of that role
    #: that lists it)
    names: dict[tuple[str, str], str] = field(default_factory=dict)
    #: the ``[run]`` table: tags recorded with every run of this manifest
    tags: dict[str, str] = field(default_factory=dict)
    #: (role, group) -> a warning per glob of the group that matches nothing (the group lists no store for it)
    empty: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    #: (role, group) -> the last path component of each of the group's globs (``nmf-*.zarr``)
    globs: dict[tuple[str, str], list[str]] = field(default_factory=dict)

    def globbed(self, role: str, name: str) -> bool:
        """A store of this ``group/folder`` name would be listed by one of its group's globs, were it there."""
        group, _, folder = name.partition("/")
        return any(fnmatch.fnmatchcase(folder, g) for g in self.globs.get((role, group), ()))

    def name(self, store: str, role: str) -> str:
        """The manifest name of ``store`` as a ``role`` (its location when the manifest does not list it)."""
        return self.names.get((role, store), store)

    @property
    def stores(self) -> list[str]:
        """Every distinct store, each once."""
        return list(dict.fromkeys(s for pair in self.pairs for s in pair))


# --------------------------------------------------------------------------- line numbers


class _Locator:
    """Line spans of the keys and table headers of a TOML text.

    Paths are tuples as in the parsed document: ``("pairs", 1, "measures")``
    is the ``measures`` key of the second ``[[pairs]]`` table.  A small
    scanner that knows strings, comments, brackets and headers; the text has
    already been parsed by :mod:`tomllib`, so it is valid TOML.
    """

    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.spans: dict[tuple, tuple[int, int]] = {}
        table: tuple = ()
        aot: dict[tuple, int] = {}
        string, depth = None, 0
        open_key = None
        for n, line in enumerate(self.lines, 1):
            if string is None and depth == 0:
                stripped = line.strip()
                if stripped.startswith("["):
                    double = stripped.startswith("[[")
                    inner = stripped[2 : stripped.index("]]")] if double else stripped[1 : stripped.index("]")]
                    raw = tuple(_split_key(inner))
                    if double:
                        aot[raw] = aot.get(raw, -1) + 1
                    table = self._resolve(raw, aot)
                    self.spans.setdefault(table, (n, n))
                    continue
                split = _key_and_value(line)
                if split is not None:
                    key, rest = split
                    open_key = table + tuple(_split_key(key))
                    self.spans[open_key] = (n, n)
                    string, depth = _scan(rest, string, depth)
                    if string is None and depth == 0:
                        open_key = None
                    continue
            string, depth = _scan(line, string, depth)
            if open_key is not None:
                self.spans[open_key] = (self.spans[open_key][0], n)
                if string is None and depth == 0:
                    open_key = None

    @staticmethod
    def _resolve(raw: tuple, aot: dict) -> tuple:
        out: list = []
        for i, part in enumerate(raw):
            out.append(part)
            if raw[: i + 1] in aot:
                out.append(aot[raw[: i + 1]])
        return tuple(out)

    def line(self, path: tuple, token: str | None = None) -> int:
        """Line of ``path`` (or of its nearest recorded parent); of ``token`` within it if found."""
        for k in range(len(path), 0, -1):
            span = self.spans.get(tuple(path[:k]))
            if span is None:
                continue
            if token is not None:
                for quoted in (f'"{token}"', f"'{token}'", token):
                    for n in range(span[0], span[1] + 1):
                        if quoted in self.lines[n - 1]:
                            return n
            return span[0]
        return 1


def _scan(text: str, string: str | None, depth: int) -> tuple[str | None, int]:
    """Carry (open string delimiter, bracket depth) over ``text``; comments ignored."""
    i = 0
    while i < len(text):
        if string is not None:
            if string in ('"', '"""') and text[i] == "\\":
                i += 2
                continue
            if text.startswith(string, i):
                i += len(string)
                string = None
                continue
            i += 1
            continue
        c = text[i]
        if c == "#":
            break
        if text.startswith('"""', i) or text.startswith("'''", i):
            string = text[i : i + 3]
            i += 3
            continue
        if c in "\"'":
            string = c
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
        i += 1
    if string in ('"', "'"):  # one-line strings end with their line
        string = None
    return string, depth


def _key_and_value(line: str) -> tuple[str, str] | None:
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "#":
            return None
        elif c == "=":
            key = line[:i].strip()
            return (key, line[i + 1 :]) if key else None
    return None


def _split_key(text: str) -> list[str]:
    parts, current, quote = [], "", None
    for c in text:
        if quote:
            if c == quote:
                quote = None
            else:
                current += c
        elif c in "\"'":
            quote = c
        elif c == ".":
            parts.append(current.strip())
            current = ""
        else:
            current += c
    parts.append(current.strip())
    return parts


# --------------------------------------------------------------------------- validation


class _Checker:
    def __init__(self, text: str, source: str):
        self.locator = _Locator(text)
        self.source = source
        self.errors: list[tuple[int, str]] = []

    def error(self, path: tuple, message: str, token: str | None = None) -> None:
        self.errors.append((self.locator.line(path, token), message))

    def raise_if_any(self) -> None:
        if self.errors:
            lines = [f"{self.source}, line {n}: {msg}" for n, msg in sorted(set(self.errors))]
            head = "" if len(lines) == 1 else f"{len(lines)} problems in the manifest:\n"
            raise ManifestError(head + "\n".join(lines))


def _where(path: tuple) -> str:
    if len(path) >= 2 and path[0] == "pairs" and isinstance(path[1], int):
        rest = ".".join(map(str, path[2:]))
        return f"[[pairs]] #{path[1] + 1}" + (f" key {rest!r}" if rest else "")
    return ".".join(map(str, path))


def _names(value, path: tuple, check: _Checker, what: str) -> list[str] | None:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(x, str) and x for x in items):
        check.error(path, f"{_where(path)} must be a {what} or a non-empty list of them")
        return None
    return items


def _check_groups(doc: dict, check: _Checker) -> dict[str, dict[str, list[str]]]:
    groups: dict[str, dict[str, list[str]]] = {}
    for role in ("truth", "pred"):
        table = doc.get(role)
        if table is None:
            check.error((), f"missing [{role}] table (name = store path, URL or glob)")
            groups[role] = {}
            continue
        if not isinstance(table, dict) or not table:
            check.error((role,), f"[{role}] must be a table of name = store path, URL or glob")
            groups[role] = {}
            continue
        groups[role] = {}
        for name, value in table.items():
            items = _names(value, (role, name), check, "store path, URL or glob")
            if items is not None:
                groups[role][name] = items
    return groups


def _check_params(entry: dict, path: tuple, measures: list[str] | None, check: _Checker) -> dict | None:
    """The pair's ``params``, each checked and made canonical by the one validation of a request.

    So a manifest accepts exactly what ``score`` and ``daskbicl score`` accept
    (``normalizer = "PRINTED"``, ``beta = "0.5"``, ``clip = 1``), with the
    same messages, and stores the canonical value.
    """
    params = entry.get("params", {})
    ppath = path + ("params",)
    if not isinstance(params, dict):
        check.error(ppath, "params must be a table, e.g. params = { beta = 0.5 }")
        return None
    if params and measures is None:
        check.error(ppath, "params needs an explicit measures list (which measures the parameters are for)")
        return None
    selected = [get(name) for name in measures or []]
    out: dict = {}
    for k, v in params.items():
        try:
            out.update(check_params({k: v}, selected))
        except DaskbiclError as exc:
            check.error(ppath + (k,), str(exc), token=k)
    return out if len(out) == len(params) else None


def _check_policy(value, path: tuple, check: _Checker, validate=lambda v: check_options(unassigned=v)["unassigned"]):
    if value is None:
        return None
    try:
        return validate(value)
    except DaskbiclError as exc:
        check.error(path, str(exc))
        return None


def _check_pair(entry, i: int, groups: dict, check: _Checker, default_policy: str = DEFAULT_POLICY) -> tuple | None:
    path = ("pairs", i)
    if not isinstance(entry, dict):
        check.error(("pairs",), "pairs must be an array of tables: write [[pairs]] headers")
        return None
    ok = True
    for key in entry:
        if key not in PAIR_KEYS:
            check.error(path + (key,), f"unknown key {key!r} in {_where(path)} (allowed: {', '.join(PAIR_KEYS)})")
            ok = False
    chosen = {}
    for role in ("truth", "pred"):
        if role not in entry:
            check.error(path, f"{_where(path)} has no {role!r} key (a name from [{role}] or a list of them)")
            ok = False
            continue
        names = _names(entry[role], path + (role,), check, f"name from [{role}]")
        if names is None:
            ok = False
            continue
        for name in names:
            if name not in groups[role]:
                known = ", ".join(sorted(groups[role])) or "none"
                check.error(path + (role,), f"{role} {name!r} is not defined in [{role}] (defined: {known})", token=name)
                ok = False
        chosen[role] = names
    measures = None
    if "measures" in entry:
        measures = _names(entry["measures"], path + ("measures",), check, "measure name")
        if measures is None:
            return None
        canonical = []
        for name in measures:
            try:
                canonical.append(get(name).name)  # "CARI" and " cari " are cari, as in score
            except DaskbiclError as exc:
                check.error(path + ("measures",), str(exc), token=name)
                ok = False
        measures = list(dict.fromkeys(canonical))
    match = entry.get("match", "all")
    if match not in MATCHES:
        check.error(path + ("match",), f"match must be one of {', '.join(repr(m) for m in MATCHES)} (\"stem\": each "
                    f"pred against the truth of the same folder name, suffix left out), got {match!r}")
        ok = False
    policy = _check_policy(entry.get("unassigned"), path + ("unassigned",), check)
    ci = _check_policy(entry.get("ci"), path + ("ci",), check, check_level)
    method = _check_policy(entry.get("ci_method"), path + ("ci_method",), check, check_method)
    if "ci_method" in entry and method is not None and "ci" not in entry:
        check.error(path + ("ci_method",), "ci_method says how the bootstrap interval of ci is read: set ci "
                    "(e.g. ci = 0.95) in the same table")
        method = None
    if any(k in entry and v is None for k, v in (("unassigned", policy), ("ci", ci), ("ci_method", method))):
        ok = False
    params = _check_params(entry, path, measures, check) if ok else None
    if not ok or params is None:
        return None
    request = Request(
        tuple(measures) if measures else None,
        tuple(sorted(params.items())),
        check.locator.line(path),
        policy or default_policy, ci=ci, ci_method=method or "bc",
        checked=True,  # each parameter was checked (and made canonical) once, by _check_params
    )
    return chosen["truth"], chosen["pred"], request, match


def _expand(pattern: str, base_dir: str, storage_options: dict) -> list[str]:
    """Store locations a path, URL or glob names (a literal is returned as is, not checked)."""
    if is_remote(pattern):  # through fsspec, so a literal URL and a glob's match are spelled alike
        fs, path = filesystem(pattern, storage_options)
        if not _MAGIC & set(pattern):
            return [fs.unstrip_protocol(path).rstrip("/")]
        with waiting(pattern, "listing"):
            found = fs.glob(path)
        return sorted(fs.unstrip_protocol(p).rstrip("/") for p in found if not _hidden(p, path))
    local = pattern[len("file://") :] if pattern.startswith("file://") else pattern
    local = os.path.expanduser(local)
    if not os.path.isabs(local):
        local = os.path.join(base_dir, local)
    if not _MAGIC & set(pattern):
        return [os.path.normpath(local)]
    return sorted(os.path.normpath(p) for p in glob.glob(local, recursive=True) if os.path.isdir(p))


def _check_fields(fields: dict, checked: list, check: _Checker) -> None:
    """A placeholder pairs stores by name only when both sides of a table have it: one side only is an error."""
    for i, item in enumerate(checked):
        if item is None:
            continue
        truth_names, pred_names, _, _ = item
        for tn in truth_names:
            for pn in pred_names:
                a, b = fields.get(("truth", tn), set()), fields.get(("pred", pn), set())
                if a != b:
                    one = sorted(a ^ b)[0]
                    has, lacks = (f"truth {tn!r}", f"pred {pn!r}") if one in a else (f"pred {pn!r}", f"truth {tn!r}")
                    check.error(("pairs", i), f"{_where(('pairs', i))}: {has} has the placeholder {{{one}}} and "
                                f"{lacks} does not: a placeholder pairs stores by name only when both globs have it")


def _hidden(found: str, pattern: str) -> bool:
    """``found`` has a hidden name (``.x``: a temporary prefix such as ``.pred-001.zarr.tmp-…``) where
    ``pattern`` has a wildcard: skipped, as a shell (and :func:`glob.glob`, locally) skips them.

    >>> _hidden("b/runs/.pred-1.zarr.tmp-ab12", "b/runs/*.zarr*"), _hidden("b/runs/pred-1.zarr", "b/runs/*.zarr")
    (True, False)
    >>> _hidden("b/.cache/p.zarr", "b/.cache/*.zarr"), _hidden("b/x/.t/p.zarr", "b/**/p.zarr")
    (False, True)
    """
    names, parts = found.strip("/").split("/"), pattern.strip("/").split("/")
    if "**" not in parts:
        return any(n.startswith(".") and not p.startswith(".") for n, p in zip(names, parts) if _MAGIC & set(p))
    literal = [p for p in parts if not _MAGIC & set(p)]
    return any(n.startswith(".") and n not in literal for n in names)


def _basename(store: str) -> str:
    return store.rstrip("/").replace("\\", "/").rsplit("/", 1)[-1]


def _check_tags(table, check: _Checker) -> dict[str, str]:
    """The ``[run]`` table: ``key = string, number or boolean``, each kept as text."""
    if not isinstance(table, dict):
        check.error(("run",), "run must be a table of tags, e.g. [run] then model = \"nmf-2.1\"")
        return {}
    tags = {}
    for key, value in table.items():
        if isinstance(value, (dict, list)) or not isinstance(value, (str, int, float, bool)):
            check.error(("run", key), f"tag {key!r} in [run] must be a string, a number or a boolean, got {value!r}")
            continue
        tags[key] = str(value).lower() if isinstance(value, bool) else str(value)
    return tags


def _expand_groups(groups: dict, base_dir: str, storage_options: dict, check: _Checker,
                   source: str = "manifest") -> tuple:
    """``(expanded, empty, fields, values)``: each group's stores, its globs that match nothing (with their
    line), its placeholders, and each store's placeholder values (``{(role, group, store): {name: value}}``)."""
    expanded: dict[tuple[str, str], list[str]] = {}
    empty: dict[tuple[str, str], list[tuple[int, str]]] = {}
    fields: dict[tuple[str, str], set[str]] = {}
    values: dict[tuple[str, str, str], dict[str, str]] = {}
    for role in ("truth", "pred"):
        for name, patterns in groups[role].items():
            stores: list[str] = []
            named = [set(_FIELD.findall(pattern)) for pattern in patterns]
            if any(n != named[0] for n in named):
                check.error((role, name), f"{role} {name!r}: every path or glob of a group has the same "
                            "placeholders (or none)")
            if named and named[0]:
                fields[(role, name)] = named[0]
            for pattern in patterns:
                try:
                    found = _expand(_FIELD.sub("*", pattern), base_dir, storage_options)
                except Exception as exc:  # fsspec: unknown protocol, missing backend, no credentials, ...
                    if storage_unavailable(exc):  # the storage did not answer: retry later (exit status 3)
                        raise StorageUnavailableError(f"{source}: cannot list {redact(pattern)}: the storage did not "
                                                      f"answer ({type(exc).__name__}: {one_line(exc)}); retry later"
                                                      ) from None
                    check.error((role, name), f"cannot expand {redact(pattern)!r}: {type(exc).__name__}: "
                                f"{one_line(exc)}", token=pattern)
                    continue
                if not found:  # a warning for the group, unless nothing at all is left to score
                    empty.setdefault((role, name), []).append(
                        (check.locator.line((role, name), pattern), f"{role} {name!r}: {redact(pattern)!r} matches nothing"))
                if _FIELD.search(pattern):
                    regex = capture(pattern, base_dir)
                    for store in found:
                        hit = regex.fullmatch(store)  # no match: paired with nothing
                        values.setdefault((role, name, store), hit.groupdict() if hit is not None else
                                          dict.fromkeys(named[0], "\0" + store))
                stores.extend(found)
            expanded[(role, name)] = list(dict.fromkeys(stores))
    return expanded, empty, fields, values


def parse_manifest(text: str, *, base_dir: str = ".", source: str = "manifest",
                   storage_options: dict | None = None) -> Manifest:
    """Validate a manifest's text and expand its globs.

    Raises
    ------
    ManifestError
        With one line per problem, each naming ``source`` and the line.
    """
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{source}: invalid TOML: {exc}") from None
    check = _Checker(text, source)
    for key in doc:
        if key not in TOP_KEYS:
            check.error((key,), f"unknown key {key!r} (allowed at the top level: {', '.join(TOP_KEYS)})")
    results = doc.get("results")
    if results is not None and not (isinstance(results, str) and results.strip()):
        check.error(("results",), f"results must be the path of the results file (a string), got {results!r}")
        results = None
    given_options, storage_options = storage_options, doc.get("storage_options", {})
    if not isinstance(storage_options, dict):
        check.error(("storage_options",), "storage_options must be a table of fsspec options")
        storage_options = {}
    storage_options = {**storage_options, **(given_options or {})}  # --storage-option over the manifest's
    default_policy = _check_policy(doc.get("unassigned"), ("unassigned",), check) or DEFAULT_POLICY
    tags = _check_tags(doc.get("run", {}), check)
    groups = _check_groups(doc, check)
    entries = doc.get("pairs")
    if entries is None:
        check.error((), "no [[pairs]] table: say which pred groups are scored against which truth groups")
        entries = []
    elif not isinstance(entries, list):
        check.error(("pairs",), "pairs must be an array of tables: write [[pairs]] headers")
        entries = []
    checked = [_check_pair(entry, i, groups, check, default_policy) for i, entry in enumerate(entries)]

    base_dir = os.path.abspath(base_dir)
    expanded, empty, fields, values = _expand_groups(groups, base_dir, storage_options, check, source)
    _check_fields(fields, checked, check)
    if results is not None and is_remote(results):
        check.error(("results",), f"results must be a local file (SQLite), got {results!r}")
    pairs: dict[tuple[str, str], list[Request]] = {}
    for truth_names, pred_names, request, match in filter(None, checked):
        for tn in truth_names:
            for pn in pred_names:
                for t in expanded[("truth", tn)]:
                    for p in expanded[("pred", pn)]:
                        if not paired(t, p, match, values, tn, pn):
                            continue
                        requests = pairs.setdefault((t, p), [])
                        if request not in requests:
                            requests.append(request)
    if empty and not pairs:  # nothing to score at all: the manifest is wrong
        check.errors.extend(e for found in empty.values() for e in found)
    check.raise_if_any()
    if results is not None:
        results = os.path.normpath(os.path.join(base_dir, os.path.expanduser(results)))
    names: dict[tuple[str, str], str] = {}
    for (role, group), stores in expanded.items():
        for store in stores:
            names.setdefault((role, store), f"{group}/{_basename(store)}")
    return Manifest(
        path=None,
        results=results,
        storage_options=dict(storage_options),
        pairs={k: tuple(v) for k, v in pairs.items()},
        source=source,
        names=names,
        tags=tags,
        empty={key: [message for _, message in found] for key, found in empty.items()},
        globs={(role, n): [_basename(_FIELD.sub("*", p)) for p in ps if _MAGIC & set(_FIELD.sub("*", p))]
               for role in ("truth", "pred") for n, ps in groups[role].items()},
    )


def load_manifest(path, storage_options: dict | None = None) -> Manifest:
    """Read, validate and expand the manifest file at ``path`` (``storage_options`` over its own table)."""
    text_path = os.fspath(path)
    try:
        with open(text_path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise ManifestError(f"cannot read manifest {text_path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ManifestError(f"manifest {text_path} is not UTF-8 text: {exc}") from None
    manifest = parse_manifest(text, base_dir=os.path.dirname(os.path.abspath(text_path)), source=text_path,
                              storage_options=storage_options)
    manifest.path = os.path.abspath(text_path)
    if manifest.results is None:
        manifest.results = os.path.splitext(manifest.path)[0] + ".sqlite"
    return manifest
