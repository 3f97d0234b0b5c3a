"""The `keras-laf` command: the experiments of the LAF paper.

    keras-laf scalars      # integer sets, the twelve targets
    keras-laf mnist        # sets of digit images
    keras-laf pointcloud   # point-cloud classification
    keras-laf unique-sum   # Set Transformer, PMA against LAF pooling

Every subcommand is a module of `SUBCOMMANDS` exposing `HELP` (one line),
`DESCRIPTION`, `add_arguments(parser)` and `run(args)`; add a line there to
add a subcommand. `run` raises `common.ExperimentError` for problems the
user can fix; `main` reports them in one line with exit status 2, as
argparse does for bad arguments.
"""

import argparse
import importlib
import logging
import sys

from laf_experiments.common import ExperimentError
from laf_experiments.common import release_output_directories

SUBCOMMANDS = {
    "scalars": "laf_experiments.scalars",
    "mnist": "laf_experiments.mnist",
    "pointcloud": "laf_experiments.pointcloud",
    "unique-sum": "laf_experiments.unique_sum",
    "graphs": "laf_experiments.graphs",
    "tune": "laf_experiments.tune",
}

PROG = "keras-laf"


def build_parser():
    """The argument parser of `keras-laf`, one subparser per experiment."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Runs the experiments of the LAF paper (Pellegrini et "
        "al., 'Learning Aggregation Functions', IJCAI 2021): trains LAF "
        "and the paper's baselines, writes results.json, results.csv, "
        "summary.csv and PNG plots to an output directory, and resumes "
        "where it stopped when run again.",
        epilog=f"Run '{PROG} COMMAND --help' for the options of a command.",
    )
    subparsers = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True
    )
    for name, module_name in SUBCOMMANDS.items():
        module = importlib.import_module(module_name)
        subparser = subparsers.add_parser(
            name,
            help=module.HELP,
            description=module.DESCRIPTION,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(subparser)
        subparser.set_defaults(run=module.run)
    return parser


class _RetracingFilter(logging.Filter):
    # Each run builds a new model, which TensorFlow reports as excessive
    # retracing of tf.functions; the warning is expected here.

    def filter(self, record):
        return "triggered tf.function retracing" not in record.getMessage()


def main(argv=None):
    """Runs `keras-laf` with `argv` (default: the command line).

    Returns:
        The exit status: 0 on success, 2 for bad arguments or a problem
        reported as `keras-laf: error: ...`, 130 when interrupted.
    """
    parser = build_parser()
    tensorflow_logger = logging.getLogger("tensorflow")
    if not any(
        isinstance(item, _RetracingFilter) for item in tensorflow_logger.filters
    ):
        tensorflow_logger.addFilter(_RetracingFilter())
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit:
        return exit.code
    try:
        args.run(args)
    except ExperimentError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            f"{PROG}: interrupted; run the same command again to resume.",
            file=sys.stderr,
        )
        return 130
    finally:
        release_output_directories()
    return 0


if __name__ == "__main__":
    sys.exit(main())
