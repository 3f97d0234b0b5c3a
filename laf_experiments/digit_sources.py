"""What the experiments on digit images (`mnist`, `unique-sum`) share:
the `--source` and `--data-dir` arguments, loading the train and test
images, and joining test sets of several sizes into one dataset.
"""

import numpy as np

from keras_laf.datasets import ragged_set_dataset
from laf_experiments import common
from laf_experiments.datasets import SOURCES
from laf_experiments.datasets import load_digit_images


def add_source_arguments(group):
    """Adds `--source` and `--data-dir`, the origin of the digit images."""
    group.add_argument(
        "--source",
        choices=SOURCES,
        default="auto",
        help="digit images: 'tfds' (MNIST), 'sklearn' (scikit-learn's "
        "digits, no download) or 'auto' (MNIST, else scikit-learn's; "
        "default: auto)",
    )
    group.add_argument(
        "--data-dir",
        metavar="DIR",
        help="tensorflow-datasets data directory for MNIST",
    )


def load_digit_pools(args):
    """Loads the train and test digit images of `args.source`.

    Returns:
        The train and test `DigitImages`.

    Raises:
        ExperimentError: `--source tfds` and MNIST cannot be loaded.
    """
    pools = []
    for split in ("train", "test"):
        try:
            pools.append(load_digit_images(split, args.source, args.data_dir))
        except Exception as error:
            if args.source != "tfds":
                raise
            raise common.ExperimentError(
                f"MNIST could not be loaded with tensorflow-datasets "
                f"({type(error).__name__}: {error}). Use --source sklearn "
                "or --source auto to work offline."
            ) from None
    if args.source == "auto" and pools[0].source == "sklearn":
        common.log(
            args.experiment,
            "MNIST is unavailable (no download possible?); using "
            "scikit-learn's 8x8 digits upsampled to 28x28 instead",
        )
    common.log(
        args.experiment,
        f"digit images from {pools[0].source}: {len(pools[0].labels)} "
        f"train, {len(pools[1].labels)} test",
    )
    return pools


def image_test_data(suite, batch_size=common.PREDICT_BATCH_SIZE):
    """Joins test sets of several maximum sizes into one dataset.

    Args:
        suite: dict from maximum size to `MnistSets` sharing one image
            pool.
        batch_size: sets per batch.

    Returns:
        The unshuffled dataset, the labels and the maximum size of every
        set, as expected by `common.run_regression`.
    """
    parts = list(suite.values())
    indices = [row for data in parts for row in data.image_indices]
    labels = np.concatenate([data.labels for data in parts])
    max_sizes = np.concatenate(
        [np.full(len(data.labels), size) for size, data in suite.items()]
    )
    dataset = ragged_set_dataset(
        indices, labels, batch_size, element_table=parts[0].images
    )
    return dataset, labels, max_sizes
