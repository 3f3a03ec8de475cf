"""Sphinx configuration: pydata theme, MyST Markdown pages, numpydoc API, sphinx-gallery.

Build (what CI runs, warnings are errors)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html
"""

from __future__ import annotations

import math
import os
import re
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))  # paths relative to this file, wherever sphinx runs from
sys.path.insert(0, os.path.dirname(_HERE))
sys.path.insert(0, os.path.join(os.path.dirname(_HERE), "examples", "gallery"))  # the gallery's _sweeps.py
sys.path.insert(0, _HERE)  # sphinx-gallery imports this module as "conf" for its scrapers

import daskbicl  # noqa: E402

project = "daskbicl"
author = "the daskbicl developers"
copyright = "2026, the daskbicl developers"
version = release = daskbicl.__version__

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax 3 copied into _static: formulas render offline (no CDN)
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "reference/measures.md", "gallery/*.ipynb", "gallery/*.py", "gallery/*.md5", "gallery/*.zip"]
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

autosummary_generate = True
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

html_theme = "pydata_sphinx_theme"
html_title = f"daskbicl {release}"
html_theme_options = {"navigation_depth": 3, "show_toc_level": 2}

sphinx_gallery_conf = {
    "examples_dirs": "../examples/gallery",
    "gallery_dirs": "gallery",
    "filename_pattern": r"plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "ignore_pattern": r"(^|[/\\])(__init__|_sweeps)\.py$",  # whole names: plot_large_sweeps.py is an example
    "write_computation_times": False,  # its page loads its table scripts from a CDN: the docs stay offline
    "image_scrapers": ("conf.figure_scraper", "matplotlib"),  # ours first: matplotlib closes its figures
    "reset_modules": ("matplotlib", "conf.reset_figures"),
}

_SEEN_FIGURES: set[int] = set()


def reset_figures(gallery_conf, fname):
    _SEEN_FIGURES.clear()


def figure_scraper(block, block_vars, gallery_conf):
    """Save the ``matplotlib.figure.Figure`` objects daskbicl returns (not registered with pyplot)."""
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure
    from sphinx_gallery.scrapers import figure_rst

    pyplot_figures = {id(plt.figure(n)) for n in plt.get_fignums()}  # the matplotlib scraper saves those
    paths = []
    for value in list(block_vars["example_globals"].values()):
        if isinstance(value, Figure) and id(value) not in _SEEN_FIGURES | pyplot_figures:
            _SEEN_FIGURES.add(id(value))
            path = next(block_vars["image_path_iterator"])
            value.savefig(path, dpi=110)
            paths.append(path)
    return figure_rst(paths, gallery_conf["src_dir"])


def _write_cli_reference(app):
    """docs/reference/cli.md from the argparse parser itself (every subcommand's --help)."""
    from daskbicl.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    lines = [
        "# Command-line reference",
        "",
        "Generated from the parser at build time: this is exactly what `--help` prints.",
        "",
        "Exit status: 0 success; 1 some pairs failed (`batch`); 2 a user error (bad input, usage, "
        "manifest, results file), printed as one line on stderr; 3 the infrastructure failed "
        "(scheduler unreachable or lost, no workers, a worker killed) where the command says so.",
        "",
        "## daskbicl",
        "",
        "```text",
        parser.format_help().rstrip(),
        "```",
        "",
    ]
    for name, subparser in sub.choices.items():
        lines += [f"## daskbicl {name}", "", "```text", subparser.format_help().rstrip(), "```", ""]
    os.makedirs(os.path.join(app.srcdir, "reference"), exist_ok=True)  # generated pages only: not in git
    out = os.path.join(app.srcdir, "reference", "cli.md")
    text = "\n".join(lines)
    if not os.path.exists(out) or open(out, encoding="utf-8").read() != text:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)


_API_GROUPS = {
    "Scoring": ["score", "explain", "contingency", "Contingency", "pair_scores", "tradeoff", "SweepTradeoff"],
    "Inputs and stores": ["partition", "biclustering", "biclustering_from_indices", "from_estimator",
                          "as_dataset", "open", "save", "random_partition", "perturb"],
    "Tradeoff-space maths": ["weighted_index", "tradeoff_curves", "optimal_tradeoff", "application_domain",
                             "compare_algorithms", "lambda_from_beta", "beta_from_lambda", "lambda_from_R",
                             "R_from_lambda"],
    "Errors": ["DaskbiclError", "InputError", "LabelError", "AlignmentError", "MeasureError", "StoreError",
               "TooLargeError", "InfrastructureError"],
}


#: Public names of subpackages that ``daskbicl`` does not re-export: (section title, module, names).
_SUBPACKAGES = [
    ("Batch evaluation (daskbicl.batch)", "daskbicl.batch",
     ["run_batch", "plot_results", "load_manifest", "parse_manifest", "ResultsDB", "BatchReport", "Manifest",
      "ManifestError", "ResultsBusyError", "ResultsFileError", "fingerprint", "export_mlflow", "MlflowExport",
      "MlflowExportError"]),
    ("Figures (daskbicl.plot)", "daskbicl.plot",
     ["plot_tradeoff_space", "plot_tradeoff", "plot_comparison", "plot_pr_space", "plot_corrected_pr_space",
      "plot_history", "plot_match_matrix", "save"]),
    ("Input notes (daskbicl.io.inputs)", "daskbicl.io.inputs", ["TwoViewsWarning", "read_labels", "count_missing"]),
]


def _write_api_reference(app):
    """docs/reference/api.rst: every public name, measures grouped by family from the registry."""
    groups = {k: [n for n in v if n in daskbicl.__all__] for k, v in _API_GROUPS.items()}
    families = {"partition": "Co-clustering measures", "bicluster": "Bicluster precision-recall measures",
                "micro": "Micro-object measures"}
    by_family: dict[str, list[str]] = {}
    for name, m in daskbicl.MEASURES.items():
        by_family.setdefault(families.get(m.family, m.family), []).append(name)
    listed = {n for names in groups.values() for n in names} | set(daskbicl.MEASURES)
    rest = [n for n in daskbicl.__all__ if n not in listed and not n.startswith("_") and n != "MEASURES"]
    lines = ["API reference", "=============", "", ".. currentmodule:: daskbicl", "",
             "Every public name of ``daskbicl``. Each measure is also an accessor method",
             "(``truth.bicl.cari(pred)``) and a ``daskbicl score --measure`` name;",
             "``daskbicl.MEASURES`` holds their records.", ""]
    sections = list(groups.items())[:1] + list(by_family.items()) + list(groups.items())[1:]
    if rest:
        sections.append(("Other", rest))
    for title, names in sections:
        lines += [title, "-" * len(title), "", ".. autosummary::", "   :toctree: generated", ""]
        lines += [f"   {n}" for n in names] + [""]
    for title, module, names in _SUBPACKAGES:
        lines += [title, "-" * len(title), "", f".. currentmodule:: {module}", "", ".. autosummary::",
                  "   :toctree: generated", ""]
        lines += [f"   {n}" for n in names] + ["", ".. currentmodule:: daskbicl", ""]
    lines += ["Registry and plans", "------------------", "", ".. autosummary::", "   :toctree: generated", ""]
    lines += [f"   measures.{n}" for n in ("ScorePlan", "Measure", "Param", "Interval", "Boolean", "OneOf",
                                           "check_request")] + [""]
    os.makedirs(os.path.join(app.srcdir, "reference"), exist_ok=True)
    out = os.path.join(app.srcdir, "reference", "api.rst")
    text = "\n".join(lines)
    if not os.path.exists(out) or open(out, encoding="utf-8").read() != text:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)


def _measure_tables() -> str:
    """Markdown tables of every measure, one per family row of the README's table (``measure_families``)."""
    from daskbicl.measures.registry import measure_families

    def cell(text) -> str:
        return str(text).replace("|", "\\|")

    def number(x: float) -> str:
        return "−∞" if x == -math.inf else "∞" if x == math.inf else f"{x:g}"

    lines = ["<!-- generated by docs/conf.py from the measure records: edit the records, not this file -->", ""]
    for family, measures in measure_families():
        if not measures:
            continue
        lines += [f"### {family.title[:1].upper()}{family.title[1:]}", "",
                  "| measure | what it is | parameters (default; allowed) | range | perfect | symmetric | "
                  "scored by default |",
                  "|---|---|---|---|---|---|---|"]
        for m in measures:
            params = "<br>".join(f"`{k}` ({p.default!r}; {p.constraint.describe()})" for k, p in m.params.items())
            compiled = " Runs compiled kernels (first use compiles them)." if m.compiled else ""
            lines.append(
                f"| `{m.name}` | {cell(m.summary)}{compiled} | {cell(params) or '—'} | "
                f"[{number(m.bounds[0])}, {number(m.bounds[1])}] | {number(m.perfect)} | "
                f"{'yes' if m.symmetric else 'no'} | {'yes' if m.default else 'no'} |"
            )
        lines.append("")
    return "\n".join(lines)


def _write_measure_tables(app):
    """docs/reference/measures.md: the measure tables, included by docs/measures/index.md."""
    os.makedirs(os.path.join(app.srcdir, "reference"), exist_ok=True)
    out = os.path.join(app.srcdir, "reference", "measures.md")
    text = _measure_tables()
    if not os.path.exists(out) or open(out, encoding="utf-8").read() != text:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)


_LITERAL = re.compile(r"(``.*?``|:math:`[^`]*`|`[^`]*`)")


def _escape_bars(line: str) -> str:
    parts = _LITERAL.split(line)
    return "".join(p if i % 2 else p.replace("|", "\\|") for i, p in enumerate(parts))


def escape_set_sizes(app, what, name, obj, options, lines):
    """Docstrings write set sizes as |X| (readable in help()); reST would read a substitution.

    Bars outside literals, roles and ``.. math::`` blocks are escaped.
    """
    in_math, indent = False, 0
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if in_math:
            if stripped and len(line) - len(stripped) <= indent:
                in_math = False
            else:
                continue
        if stripped.startswith(".. math::"):
            in_math, indent = True, len(line) - len(stripped)
            if stripped[len(".. math::"):].strip():
                continue
            continue
        if stripped.startswith(">>>") or stripped.startswith("..."):
            continue
        lines[i] = _escape_bars(line)


class _App:  # what the generators need of a Sphinx app, so they can run before autosummary does
    srcdir = os.path.dirname(os.path.abspath(__file__))


os.environ.setdefault("COLUMNS", "100")  # argparse wraps help at the terminal width
_write_cli_reference(_App)
_write_api_reference(_App)
_write_measure_tables(_App)


def setup(app):
    app.connect("autodoc-process-docstring", escape_set_sizes)
