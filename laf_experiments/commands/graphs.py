"""`keras-laf graphs`: PNA's graph-properties benchmark.

The experiment, its tasks and its scores are `laf_experiments.graphs`,
which the graph tests also import; this module hands the subcommand's
interface on.
"""

from laf_experiments.graphs import DESCRIPTION
from laf_experiments.graphs import HELP
from laf_experiments.graphs import add_arguments
from laf_experiments.graphs import run

__all__ = ["DESCRIPTION", "HELP", "add_arguments", "run"]
