"""The shared names that `digit_data.py`, `scalars.py`, `mnist.py` and
`units.py` still import from here, as `common.<name>`, gathered from the
modules that hold them:

- `errors`: `ExperimentError`, `MissingDependency`, `require`, `log`;
- `settings`: argument types, the training settings and the data seeds;
- `store`: the output directory, its lock, and `ResultStore`;
- `regression`: the set-regression experiment and its plots;
- `runner`: the loop of every subcommand, and `cached`.

New code imports those modules. None of them imports this one, so the
old circle (`common` and `runner` importing each other) is gone.
"""

from laf_experiments.errors import ExperimentError
from laf_experiments.errors import MissingDependency
from laf_experiments.errors import log
from laf_experiments.regression import open_regression_store
from laf_experiments.regression import run_regression
from laf_experiments.runner import cached
from laf_experiments.settings import PREDICT_BATCH_SIZE
from laf_experiments.settings import QUICK_SIZES
from laf_experiments.settings import TEST_SEED
from laf_experiments.settings import VALIDATION_SEED
from laf_experiments.settings import add_common_arguments
from laf_experiments.settings import add_methods_and_sizes_arguments
from laf_experiments.settings import choice_list
from laf_experiments.settings import positive_int_list
from laf_experiments.settings import resolve_settings
from laf_experiments.store import open_store
from laf_experiments.store import prepare_output_directory

__all__ = [
    "ExperimentError",
    "MissingDependency",
    "PREDICT_BATCH_SIZE",
    "QUICK_SIZES",
    "TEST_SEED",
    "VALIDATION_SEED",
    "add_common_arguments",
    "add_methods_and_sizes_arguments",
    "cached",
    "choice_list",
    "log",
    "open_regression_store",
    "open_store",
    "positive_int_list",
    "prepare_output_directory",
    "resolve_settings",
    "run_regression",
]
