"""Sets of handwritten digit images labelled from their digits, as in LAF.

The digit sets are drawn exactly as in `integer_sets` (same sizes, same
test-set diversification, same seeds), then every digit is replaced by an
image of that digit drawn uniformly at random, with replacement, from a
`DigitImages` pool: the MNIST train split for training sets and the test
split for test sets in the paper (see `load_digit_images`). The choice of
images uses `np.random.default_rng([seed, 0])` for training sets and
`np.random.default_rng([seed, max_size, 0])` for test sets.

`make_unique_digit_sets` builds the SetTransformer task of the paper: sets
of 2..5 digit images labelled by the sum (or mean, or count) of their
DISTINCT digits.
"""

import dataclasses

import numpy as np

from keras_laf.datasets.ragged_dataset import ragged_set_dataset
from laf_experiments.datasets.aggregation_targets import check_target
from laf_experiments.datasets.aggregation_targets import target_values
from laf_experiments.datasets.integer_sets import NUM_DIGITS
from laf_experiments.datasets.integer_sets import TEST_MAX_SIZES
from laf_experiments.datasets.integer_sets import sample_test_sets
from laf_experiments.datasets.integer_sets import sample_training_sets

UNIQUE_REDUCTIONS = ("sum", "mean", "count")


@dataclasses.dataclass(frozen=True)
class MnistSets:
    """Sets of digit images with their digits and labels, as NumPy arrays.

    Attributes:
        digits: list of int32 NumPy arrays, the digits of each set.
        image_indices: list of int32 NumPy arrays, for each set the rows of
            `images` showing its digits, in the same order as `digits`.
        images: float32 NumPy array `(num_images, 784)`, the image pool.
        labels: float32 NumPy array `(len(digits),)`, the label of each set.
        target: the label's name: one of `TARGETS`, or `"unique_sum"`,
            `"unique_mean"`, `"unique_count"`.
        source: where the images come from, `"tfds"` or `"sklearn"`.
    """

    digits: list
    image_indices: list
    images: np.ndarray
    labels: np.ndarray
    target: str
    source: str

    @property
    def sizes(self):
        """int64 NumPy array `(len(digits),)`: the size of each set."""
        return np.array([len(elements) for elements in self.digits])

    def to_dataset(self, batch_size, shuffle=False, seed=None):
        """Builds a `tf.data.Dataset` of ragged batches of image sets.

        Args:
            batch_size: positive int, the number of sets per batch.
            shuffle: whether to shuffle the sets, afresh at every epoch.
            seed: optional int seed of the shuffling.

        Returns:
            A `tf.data.Dataset` of `(images, labels)`: a float32
            `tf.RaggedTensor` `(batch, None, 784)` and float32 `(batch, 1)`.

        Example:

        >>> pool = load_digit_images("train", source="sklearn")
        >>> data = make_mnist_training_sets(pool, 100, "sum")
        >>> dataset = data.to_dataset(batch_size=32, shuffle=True, seed=0)
        """
        return ragged_set_dataset(
            self.image_indices,
            self.labels,
            batch_size,
            shuffle=shuffle,
            seed=seed,
            element_table=self.images,
        )


def make_mnist_training_sets(
    digit_images, num_sets, target, min_size=2, max_size=10, seed=0
):
    """Samples labelled training sets of digit images.

    Args:
        digit_images: the image pool, a `DigitImages` (the train split in
            the paper).
        num_sets: positive int, the number of sets.
        target: the label, one of `TARGETS`.
        min_size: positive int, the smallest set size.
        max_size: int, the largest set size, at least `min_size`.
        seed: non-negative int seed.

    Returns:
        An `MnistSets`.

    Example:

    >>> pool = load_digit_images("train")
    >>> data = make_mnist_training_sets(pool, 100_000, "sum")
    """
    check_target(target)
    digits = sample_training_sets(num_sets, min_size, max_size, seed)
    labels = target_values(target, digits)
    rng = np.random.default_rng([seed, 0])
    return _with_images(digits, labels, target, digit_images, rng)


def make_mnist_test_sets(
    digit_images,
    num_sets,
    target,
    max_size,
    min_size=2,
    seed=1,
    diversify=True,
):
    """Samples labelled test sets of digit images for a maximum size.

    Args:
        digit_images: the image pool, a `DigitImages` (the test split in
            the paper).
        num_sets: positive int, the number of sets.
        target: the label, one of `TARGETS`.
        max_size: int, the largest set size `M`, at least `min_size`.
        min_size: positive int, the smallest set size.
        seed: non-negative int seed.
        diversify: whether to diversify the digits as in `integer_sets`.

    Returns:
        An `MnistSets`.

    Example:

    >>> pool = load_digit_images("test")
    >>> data = make_mnist_test_sets(pool, 1000, "max", max_size=50)
    """
    check_target(target)
    digits = sample_test_sets(num_sets, max_size, min_size, seed, diversify)
    labels = target_values(target, digits)
    rng = np.random.default_rng([seed, max_size, 0])
    return _with_images(digits, labels, target, digit_images, rng)


def make_mnist_test_sets_by_max_size(
    digit_images,
    num_sets,
    target,
    max_sizes=TEST_MAX_SIZES,
    min_size=2,
    seed=1,
    diversify=True,
):
    """Samples labelled test sets of digit images for several maximum sizes.

    Args:
        digit_images: the image pool, a `DigitImages`.
        num_sets: positive int, the number of sets for each maximum size.
        target: the label, one of `TARGETS`.
        max_sizes: sequence of maximum sizes `M`, by default
            `5, 10, ..., 50` as in the paper.
        min_size: positive int, the smallest set size.
        seed: non-negative int seed.
        diversify: whether to diversify the digits.

    Returns:
        Dict mapping each maximum size to an `MnistSets`.

    Example:

    >>> pool = load_digit_images("test")
    >>> suite = make_mnist_test_sets_by_max_size(pool, 1000, "mean")
    """
    return {
        max_size: make_mnist_test_sets(
            digit_images, num_sets, target, max_size, min_size, seed, diversify
        )
        for max_size in max_sizes
    }


def make_mnist_test_datasets(
    digit_images,
    num_sets,
    target,
    batch_size,
    max_sizes=TEST_MAX_SIZES,
    min_size=2,
    seed=1,
    diversify=True,
):
    """Builds ragged test datasets of digit-image sets for several sizes.

    Args:
        digit_images: the image pool, a `DigitImages`.
        num_sets: positive int, the number of sets for each maximum size.
        target: the label, one of `TARGETS`.
        batch_size: positive int, the number of sets per batch.
        max_sizes: sequence of maximum sizes `M`, by default
            `5, 10, ..., 50` as in the paper.
        min_size: positive int, the smallest set size.
        seed: non-negative int seed.
        diversify: whether to diversify the digits.

    Returns:
        Dict mapping each maximum size to an unshuffled `tf.data.Dataset`
        of `(images, labels)`: float32 `tf.RaggedTensor`
        `(batch, None, 784)` and float32 `(batch, 1)`.

    Example:

    >>> pool = load_digit_images("test")
    >>> datasets = make_mnist_test_datasets(pool, 1000, "max", 128)
    """
    suite = make_mnist_test_sets_by_max_size(
        digit_images, num_sets, target, max_sizes, min_size, seed, diversify
    )
    return {
        max_size: data.to_dataset(batch_size)
        for max_size, data in suite.items()
    }


def make_unique_digit_sets(
    digit_images, num_sets, reduction="sum", min_size=2, max_size=5, seed=0
):
    """Samples sets of digit images labelled from their distinct digits.

    The digits are drawn as in `sample_training_sets` (size uniform in
    `{min_size, ..., max_size}`, digits uniform in 0..9) and the label
    reduces the set of DISTINCT digits: e.g. the digits `[3, 3, 5]` give
    `unique_sum` 8, `unique_mean` 4 and `unique_count` 2.

    Args:
        digit_images: the image pool, a `DigitImages`.
        num_sets: positive int, the number of sets.
        reduction: `"sum"`, `"mean"` or `"count"` of the distinct digits.
        min_size: positive int, the smallest set size.
        max_size: int, the largest set size, at least `min_size`.
        seed: non-negative int seed.

    Returns:
        An `MnistSets` whose target is `"unique_" + reduction`.

    Example:

    >>> pool = load_digit_images("train", source="sklearn")
    >>> data = make_unique_digit_sets(pool, 1000, reduction="mean")
    """
    if reduction not in UNIQUE_REDUCTIONS:
        raise ValueError(
            f"`reduction` must be one of {UNIQUE_REDUCTIONS}. "
            f"Received: {reduction!r}"
        )
    digits = sample_training_sets(num_sets, min_size, max_size, seed)
    present = np.zeros((num_sets, NUM_DIGITS), dtype=bool)
    sizes = [len(elements) for elements in digits]
    set_ids = np.repeat(np.arange(num_sets), sizes)
    present[set_ids, np.concatenate(digits)] = True
    unique_count = present.sum(axis=1)
    unique_sum = present @ np.arange(NUM_DIGITS)
    labels = {
        "sum": unique_sum,
        "mean": unique_sum / unique_count,
        "count": unique_count,
    }[reduction]
    rng = np.random.default_rng([seed, 0])
    return _with_images(
        digits, labels, f"unique_{reduction}", digit_images, rng
    )


def _with_images(digits, labels, target, digit_images, rng):
    # Replaces every digit by a uniformly drawn image of it from the pool.
    pool_labels = digit_images.labels
    counts = np.bincount(pool_labels, minlength=NUM_DIGITS)
    flat_digits = np.concatenate(digits)
    missing = np.setdiff1d(flat_digits, np.flatnonzero(counts))
    if missing.size:
        raise ValueError(
            f"The image pool has no image of the digits {missing.tolist()}. "
            f"Received a pool of {len(pool_labels)} images with digit counts "
            f"{counts.tolist()}."
        )
    by_digit = np.argsort(pool_labels, kind="stable")
    starts = np.cumsum(counts) - counts
    offsets = rng.integers(0, counts[flat_digits])
    flat_indices = by_digit[starts[flat_digits] + offsets].astype("int32")
    sizes = [len(elements) for elements in digits]
    boundaries = np.cumsum(sizes)[:-1]
    return MnistSets(
        digits=digits,
        image_indices=np.split(flat_indices, boundaries),
        images=digit_images.images,
        labels=np.asarray(labels, dtype="float32"),
        target=target,
        source=digit_images.source,
    )
