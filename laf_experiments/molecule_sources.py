"""Where the molecules of `keras-laf molecules` come from, and their flags.

RDKit's NCI molecules by default (`laf_experiments.data.nci_molecules`),
or a user's CSV of SMILES and targets (`--data`, `--smiles-column`,
`--targets`; `laf_experiments.data.molecule_tables`), split by heavy
atoms (`--train-sizes`, `--test-sizes`), featurised in `--workers`
processes and, for a CSV, cached in `--cache-dir`. The flags are checked
before anything slow; loading logs the skipped rows (the first few; all
of them go to `SKIPPED` in the output directory) and the molecules read
per second.
"""

import argparse
import time
import warnings

from laf_experiments.data.molecule_tables import check_size_ranges
from laf_experiments.data.molecule_tables import parse_size_ranges
from laf_experiments.data.nci_molecules import TARGETS
from laf_experiments.data.nci_molecules import TEST_SIZES
from laf_experiments.data.nci_molecules import TRAIN_SIZES
from laf_experiments.errors import ExperimentError
from laf_experiments.errors import log
from laf_experiments.settings import choice_list
from laf_experiments.settings import positive_int

# Every skipped row of the data: its line, SMILES, problem and reason.
SKIPPED = "skipped_rows.csv"
# Skipped rows named in the log; the rest are counted there.
LOGGED_SKIPPED = 10


def _size_ranges(text):
    try:
        return parse_size_ranges(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_data_arguments(parser, quick_targets):
    """Adds the data flags of `keras-laf molecules`; `quick_targets` are
    the NCI targets of `--quick`."""
    group = parser.add_argument_group("data")
    group.add_argument(
        "--data",
        metavar="FILE",
        help="your CSV of SMILES and targets, a header row naming its "
        "columns (default: RDKit's NCI molecules)",
    )
    group.add_argument(
        "--smiles-column",
        metavar="C",
        default="smiles",
        help="the column of the SMILES in --data (default: smiles)",
    )
    group.add_argument(
        "--targets",
        metavar="T1,T2,...",
        help="comma-separated targets: the columns of --data, or of the "
        f"NCI molecules 'all' or {', '.join(TARGETS)} (default: all; "
        f"--quick: {','.join(quick_targets)})",
    )
    group.add_argument(
        "--train-sizes",
        type=_size_ranges,
        metavar="LOW-HIGH",
        help="heavy atoms of the training and validation molecules "
        f"(default: {TRAIN_SIZES[0]})",
    )
    group.add_argument(
        "--test-sizes",
        type=_size_ranges,
        metavar="R1,R2,...",
        help="heavy atoms of each test split, a range each, the last may "
        "be open (default: "
        f"{','.join(name for name, _, _ in TEST_SIZES)})",
    )
    group.add_argument(
        "--workers",
        type=positive_int,
        metavar="N",
        help="worker processes that featurise the molecules (default: one per "
        "core, at most one per 10,000 molecules)",
    )
    group.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="where the featurised --data is cached (default: "
        "~/.cache/keras-laf/molecules)",
    )


def data_choices(args, quick_targets):
    """The targets, training sizes and test sizes that `args` ask for.

    Returns:
        A tuple: the targets (the NCI's, `quick_targets` with `--quick`,
        unless named), the `(name, low, high)` of the training sizes and
        a tuple of those of the test splits.

    Raises:
        ExperimentError: an unknown NCI target, `--data` without
            `--targets`, more than one training range or overlapping
            ranges.
    """
    if args.data is None and args.targets is None:
        targets = quick_targets if args.quick else TARGETS
    elif args.data is None:
        try:
            targets = choice_list(TARGETS, "target")(args.targets)
        except argparse.ArgumentTypeError as error:
            raise ExperimentError(f"argument --targets: {error}") from None
    else:
        names = [name.strip() for name in (args.targets or "").split(",")]
        targets = tuple(dict.fromkeys(name for name in names if name))
        if not targets:
            raise ExperimentError(
                "--data needs --targets: the comma-separated columns of "
                f"the targets in {args.data}"
            )
    train_sizes = args.train_sizes or (TRAIN_SIZES,)
    test_sizes = args.test_sizes or TEST_SIZES
    try:
        if len(train_sizes) > 1:
            raise ValueError("--train-sizes takes one range")
        check_size_ranges(train_sizes[0], test_sizes)
    except ValueError as error:
        raise ExperimentError(f"--train-sizes, --test-sizes: {error}") from None
    return targets, train_sizes[0], test_sizes


def load_molecules(args):
    """The molecules of `args` (`--data` or the NCI's), as
    `laf_experiments.data.molecule_tables.LabelledMolecules`, with the
    skipped rows and the time logged.

    Raises:
        ExperimentError: the file cannot be read, lacks a column, or
            gives no molecule.
    """
    from keras_laf.datasets import SkippedMoleculeWarning
    from laf_experiments.data.molecule_tables import load_molecule_table
    from laf_experiments.data.nci_molecules import load_nci_molecules

    name = args.data or "RDKit's NCI molecules"
    log(args.experiment, f"reading and featurising {name}")
    start = time.perf_counter()
    with warnings.catch_warnings():
        # Logged below instead, the first few.
        warnings.simplefilter("ignore", SkippedMoleculeWarning)
        try:
            if args.data is None:
                molecules = load_nci_molecules(
                    workers=args.workers, verbose=args.verbose
                )
            else:
                molecules = load_molecule_table(
                    args.data,
                    args.smiles_column,
                    args.targets,
                    workers=args.workers,
                    cache_dir=args.cache_dir,
                    verbose=args.verbose,
                )
        except (OSError, ValueError) as error:
            raise ExperimentError(f"cannot read {name}: {error}") from None
    seconds = time.perf_counter() - start
    for item in molecules.skipped[:LOGGED_SKIPPED]:
        log(args.experiment, f"skipped line {item.line_number}: {item.reason}")
    if len(molecules.skipped) > LOGGED_SKIPPED:
        log(
            args.experiment,
            f"... {len(molecules.skipped) - LOGGED_SKIPPED} more skipped "
            f"rows, all listed in {SKIPPED}",
        )
    log(
        args.experiment,
        f"{len(molecules.graphs)} molecules in {seconds:.1f} s "
        f"({len(molecules.graphs) / seconds:.0f} molecules/s)",
    )
    return molecules
