"""Batch and scheduled evaluation: many (truth, pred) pairs from a TOML manifest.

``daskbicl batch MANIFEST.toml`` scores every pair the manifest names in one
Dask computation (each store read once), records one row per (truth, pred,
measure, parameters) in an SQLite file, and on the next run skips what is
already scored for the same input fingerprints.  ``daskbicl results FILE``
exports the rows.

Modules:

* :mod:`~daskbicl.batch.manifest`    -- parse and validate the manifest (errors name the line);
* :mod:`~daskbicl.batch.fingerprint` -- content fingerprints of Zarr stores;
* :mod:`~daskbicl.batch.results`     -- the SQLite results file;
* :mod:`~daskbicl.batch.pairing`     -- pairing each pred with its own truth by name (``match``, ``{dataset}``);
* :mod:`~daskbicl.batch.names`       -- how rows name their stores (manifest names, paths) and measures (labels),
  and patterns match;
* :mod:`~daskbicl.batch.runlog`      -- what each run saw: one run, two runs compared, the latest state;
* :mod:`~daskbicl.batch.mlflow_export` -- the runs as MLflow runs (``results --to-mlflow``; the ``mlflow`` extra);
* :mod:`~daskbicl.batch.gates`       -- ``--fail-below``, ``--fail-on-drop``, ``--fail-on-significant-drop``,
  ``--fail-on-missing`` (exit status 4; a gate that checks nothing, or a noise gate without intervals: 2);
* :mod:`~daskbicl.batch.explain_pair` -- ``results --explain PAIR``: ``daskbicl.explain`` of a recorded pair;
* :mod:`~daskbicl.batch.params`      -- the parameters recorded with a score (``params`` column);
* :mod:`~daskbicl.batch.runner`      -- survey (fingerprints, kinds), plan (what to score) and
  execute (on a Client);
* :mod:`~daskbicl.batch.commands`         -- the ``batch`` and ``results`` subcommands.
"""

from .explain_pair import ExplainPairError, explain_results
from .fingerprint import StoreInfo, fingerprint, fingerprint_stores
from .history_plot import plot_results
from .manifest import Manifest, ManifestError, Request, load_manifest, parse_manifest
from .mlflow_export import MlflowExport, MlflowExportError, export_mlflow
from .names import Pair
from .results import ResultsBusyError, ResultsDB, ResultsFileError
from .runner import BatchReport, Plan, execute, plan, run_batch, survey

__all__ = [
    "plot_results",
    "BatchReport",
    "Manifest",
    "Pair",
    "ManifestError",
    "Plan",
    "Request",
    "ResultsBusyError",
    "ResultsDB",
    "ResultsFileError",
    "StoreInfo",
    "execute",
    "explain_results",
    "ExplainPairError",
    "export_mlflow",
    "MlflowExport",
    "MlflowExportError",
    "fingerprint",
    "fingerprint_stores",
    "load_manifest",
    "parse_manifest",
    "plan",
    "run_batch",
    "survey",
]
