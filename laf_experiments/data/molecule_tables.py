"""Molecules with targets, split by heavy atoms: RDKit's NCI set or a
user's CSV.

`LabelledMolecules` holds the graphs of `keras_laf.datasets` with one
label array per target and splits them by size: molecules of the
training sizes (a fraction held out for validation) and one test split
per range of larger sizes. `load_molecule_table` reads a user's CSV of
SMILES and targets (`keras_laf.datasets.read_molecule_table`: bad rows
reported by line, featurised in worker processes, cached on disk);
`laf_experiments.data.nci_molecules` gives RDKit's NCI molecules the same
way. A size range is written as `keras-laf molecules` takes it:
`"16-25"`, `"41+"` or `"7"`.
"""

import csv
import hashlib
import math
import pathlib

import numpy as np


def parse_size_range(text):
    """A range of heavy atoms from its text.

    Args:
        text: `"low-high"`, `"low+"` (no upper bound) or `"size"`, with
            `1 <= low <= high`.

    Returns:
        A tuple `(name, low, high)`, `high` `math.inf` for `"low+"`.

    Raises:
        ValueError: the text is none of those forms.

    Example:

    >>> parse_size_range("16-25"), parse_size_range("41+")
    (('16-25', 16, 25), ('41+', 41, inf))
    """
    name = text.strip()
    if name.endswith("+"):
        bounds = (name[:-1], None)
    else:
        low, dash, high = name.partition("-")
        bounds = (low, high if dash else low)
    try:
        low, high = (math.inf if b is None else int(b) for b in bounds)
    except ValueError:
        low, high = 0, 0
    if not 1 <= low <= high:
        raise ValueError(
            f"expected heavy atoms as 'low-high', 'low+' or 'size' with 1 <= "
            f"low <= high, e.g. 16-25 or 41+; received {text!r}"
        )
    return name, low, high


def parse_size_ranges(text):
    """Comma-separated ranges of heavy atoms, each as `parse_size_range`.

    >>> [name for name, _, _ in parse_size_ranges("23-25,26-28")]
    ['23-25', '26-28']
    """
    return tuple(parse_size_range(item) for item in text.split(","))


def check_size_ranges(train_sizes, test_sizes):
    """Raises `ValueError` where two ranges, training or test, overlap."""
    ranges = sorted([train_sizes, *test_sizes], key=lambda item: item[1])
    for before, after in zip(ranges, ranges[1:]):
        if after[1] <= before[2]:
            raise ValueError(
                f"the heavy atoms of {before[0]} and {after[0]} overlap: "
                "training and test sizes must not share a molecule"
            )


class LabelledMolecules:
    """Molecules as graphs, with targets, from one source.

    Attributes:
        graphs: a `keras_laf.datasets.MoleculeGraphs` of the molecules
            kept.
        labels: dict from target name to a float array `(len(graphs),)`,
            NaN where undefined.
        source: str, where the molecules come from, as the records name
            it.
        details: dict of further facts of the source for the records
            (the SHA-256 of a file).
        skipped: the `keras_laf.datasets.SkippedMolecule` rows of the
            source that gave no molecule.
    """

    def __init__(self, graphs, labels, source, details=None):
        self.graphs = graphs
        self.labels = labels
        self.source = source
        self.details = dict(details or {})
        self.skipped = graphs.skipped

    def record(self):
        """What the records say of the molecules: `source`, `details`,
        `num_molecules` and `skipped_rows`, the number of skipped rows of
        each problem of `keras_laf.datasets.molecules.PROBLEMS`."""
        from keras_laf.datasets.molecules import PROBLEMS

        counts = dict.fromkeys(PROBLEMS, 0)
        for item in self.skipped:
            counts[item.problem] += 1
        return {
            "source": self.source,
            **self.details,
            "num_molecules": len(self.graphs),
            "skipped_rows": counts,
        }

    def write_skipped(self, path):
        """Writes the skipped rows to a CSV file: line, SMILES, problem
        and reason."""
        with open(path, "w", newline="") as file:
            writer = csv.writer(file)
            writer.writerow(["line", "smiles", "problem", "reason"])
            writer.writerows(self.skipped)

    def split_indices(
        self, train_sizes, test_sizes, validation_fraction=0.2, seed=0
    ):
        """The molecules of each split, by heavy atoms.

        Args:
            train_sizes: the `(name, low, high)` of the training and
                validation molecules (`parse_size_range`).
            test_sizes: a sequence of `(name, low, high)`, one per test
                split.
            validation_fraction: float, the share of the molecules of the
                training sizes held out for validation. Defaults to `0.2`.
            seed: int, the seed of that draw. Defaults to `0`.

        Returns:
            A dict of int arrays: `"train"`, `"validation"` and one per
            name of `test_sizes`.
        """
        sizes = self.graphs.num_atoms
        _, low, high = train_sizes
        small = np.flatnonzero((sizes >= low) & (sizes <= high))
        order = np.random.default_rng(seed).permutation(small)
        num_validation = int(round(validation_fraction * len(small)))
        splits = {
            "train": np.sort(order[num_validation:]),
            "validation": np.sort(order[:num_validation]),
        }
        for name, low, high in test_sizes:
            splits[name] = np.flatnonzero((sizes >= low) & (sizes <= high))
        return splits

    def target_splits(self, splits, target, sizes):
        """The splits of the molecules whose `target` is defined.

        Args:
            splits: the dict of `split_indices`.
            target: a name of `labels`.
            sizes: dict from split name to the number of molecules kept,
                the first ones, or None to keep all.

        Returns:
            A tuple: the dict of the splits' indices, and the number of
            molecules of `splits` left out for want of a value.
        """
        finite = np.isfinite(self.labels[target])
        kept = {name: items[finite[items]] for name, items in splits.items()}
        missing = sum(len(splits[n]) - len(kept[n]) for n in splits)
        return {n: items[: sizes[n]] for n, items in kept.items()}, missing


def load_molecule_table(
    path, smiles_column, targets, workers=None, cache_dir=None, verbose=0
):
    """Reads a user's CSV of SMILES and targets as `LabelledMolecules`.

    Args:
        path: the CSV file, a header row naming its columns.
        smiles_column: str, the column of the SMILES.
        targets: sequence of str, the columns of the targets.
        workers, cache_dir, verbose: as
            `keras_laf.datasets.read_molecule_table`.

    Returns:
        A `LabelledMolecules` whose labels are the target columns, every
        value finite (rows with a bad value are skipped and reported),
        whose `source` is the file's name and whose `details` are the
        SMILES column and the SHA-256 of the file's content.
    """
    from keras_laf.datasets import read_molecule_table

    graphs, values = read_molecule_table(
        path,
        smiles_column,
        list(targets),
        workers=workers,
        cache_dir=cache_dir,
        verbose=verbose,
    )
    labels = {target: values[:, i] for i, target in enumerate(targets)}
    path = pathlib.Path(path)
    details = {
        "smiles_column": smiles_column,
        "data_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
    }
    return LabelledMolecules(graphs, labels, path.name, details)
