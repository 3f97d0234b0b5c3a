"""The `keras-laf` command: the experiments of the LAF paper.

    keras-laf scalars      # integer sets, the twelve targets
    keras-laf mnist        # sets of digit images
    keras-laf pointcloud   # point-cloud classification
    keras-laf unique-sum   # Set Transformer, PMA against LAF pooling
    keras-laf graphs       # PNA's graph-properties benchmark
    keras-laf tune         # KerasTuner search of the LAF units
    keras-laf units        # test MAE against the LAF units (Appendix B)
    keras-laf expansion    # text-concept set expansion (DeepSets)
    keras-laf molecules    # RDKit's molecules, small to large

Every subcommand is a module of `laf_experiments.commands`, listed in
`SUBCOMMANDS`, exposing `HELP` (one line),
`DESCRIPTION`, `add_arguments(parser)` and `run(args)`; add a line there to
add a subcommand. `run` raises `errors.ExperimentError` for problems the
user can fix; `main` reports them in one line with exit status 2, as
argparse does for bad arguments.
"""

import argparse
import importlib
import logging
import os
import sys
import tempfile
from importlib import metadata

from laf_experiments.errors import ExperimentError
from laf_experiments.store import release_output_directories

SUBCOMMANDS = {
    "scalars": "laf_experiments.commands.scalars",
    "mnist": "laf_experiments.commands.mnist",
    "pointcloud": "laf_experiments.commands.pointcloud",
    "unique-sum": "laf_experiments.commands.unique_sum",
    "graphs": "laf_experiments.commands.graphs",
    "tune": "laf_experiments.commands.tune",
    "units": "laf_experiments.commands.units",
    "expansion": "laf_experiments.commands.expansion",
    "molecules": "laf_experiments.commands.molecules",
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
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {_version()}"
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


def _version():
    try:
        return metadata.version("keras-laf")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def _import_tensorflow_quietly():
    # TensorFlow's shared libraries print their start-up messages (CUDA
    # probing, oneDNN, CPU features) from C++ while they load, whatever
    # TF_CPP_MIN_LOG_LEVEL says, so file descriptor 2 goes to a temporary
    # file meanwhile; it is replayed if the import fails. On JAX and
    # PyTorch, Keras imports TensorFlow, where it is installed, the first
    # time it saves a model (`serialize_keras_object` looks for
    # `tf.TensorShape`): it is imported here too, rather than mid-run.
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            import keras_laf  # noqa: F401

            _import_tensorflow_if_installed()
        except BaseException:
            os.dup2(saved, 2)
            captured.seek(0)
            sys.stderr.write(captured.read().decode(errors="replace"))
            raise
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def _import_tensorflow_if_installed():
    try:
        import tensorflow  # noqa: F401
    except ImportError:
        # Keras then runs without it, as on an accelerator image with JAX
        # alone.
        pass


def _set_verbosity(args):
    # TensorFlow is imported here, after parsing, so that `--help` and bad
    # arguments do not wait for it; its start-up logging shows only with
    # --verbose 3, on every backend. A user's TF_CPP_MIN_LOG_LEVEL is kept.
    if args.verbose < 3:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        _import_tensorflow_quietly()
    # Keras's progress bar rewrites its line with carriage returns, which
    # a log file keeps: one line per epoch there instead.
    args.verbose = min(args.verbose, 2)
    if args.verbose == 1 and not sys.stdout.isatty():
        args.verbose = 2


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
    _set_verbosity(args)
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
