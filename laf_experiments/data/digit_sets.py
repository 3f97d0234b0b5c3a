"""Sets of digits 0..9 labelled by an aggregation target, as in LAF: the
digits as integers (`IntegerSets`) or as images of handwritten digits
(`MnistSets`, with `digit_images`).

Training sets follow the paper: the size `n` of each set is uniform in
`{min_size, ..., max_size}` (default 2..10) and its elements are i.i.d.
uniform in `{0, ..., 9}`.

Test sets are drawn for a maximum size `M` (the paper uses
`M = 5, 10, ..., 50`, see `TEST_MAX_SIZES`): the size is uniform in
`{min_size, ..., M}`. Uniform digits would make the labels of large sets
degenerate (the max of 50 uniform digits is 9 with probability 0.995, the
mean is close to 4.5, the std close to 2.87), so by default the elements of
each test set are *diversified*. For each set, independently:

1. draw two digits uniformly from `{0, ..., 9}`; the smaller is `low`, the
   larger is `high` (so `high = h` with probability `(2h + 1) / 100`);
2. the allowed digits are `low`, `high`, and each digit strictly between
   them with probability 1/2, independently;
3. draw weights over the allowed digits from a flat Dirichlet
   distribution (all concentrations 1);
4. draw the `n` elements i.i.d. from the allowed digits with these weights.

Then, at every `M`, `max` and `min` range over all digits, the set can be
constant (`low == high`, probability 1/10), and the mean, median, spread,
skewness and kurtosis vary from set to set instead of concentrating.
Pass `diversify=False` for test sets drawn like the training sets.

`protocol="authors"` draws test sets the way the paper's authors' generator
tests (`sample_authors_test_sets`), with sets whose size and content depend
on the target:

- `count` and `inverse_count`: sizes uniform in `{ceil(0.8 M), ..., M}`
  (skewed towards `M`), uniform digits;
- `max`, `min`: the label cycles through the digits (set i has label
  `i % 10`); the other elements are uniform on the digits on the label's
  side of it, so the label is always the set's extreme;
- `max_minus_min`, `min_over_max`: the pair (min, max) cycles through the
  55 pairs of digits `low <= high`, the other elements uniform in
  `[low, high]`;
- every other target (sum, mean, median and the moments): sets of exactly
  `M` uniform digits.

Seeds: training sets use `np.random.default_rng(seed)`, test sets
`np.random.default_rng([seed, M])`, so each maximum size has its own
reproducible stream whichever other sizes are requested.

Image sets: the digit sets are drawn as above (same sizes, same test-set
diversification, same seeds), then every digit is replaced by an image of
that digit drawn uniformly at random, with replacement, from a
`DigitImages` pool: the MNIST train split for training sets and the test
split for test sets in the paper (see `load_digit_images`). The choice of
images uses `np.random.default_rng([seed, 0])` for training sets and
`np.random.default_rng([seed, max_size, 0])` for test sets.

`make_unique_digit_sets` builds the SetTransformer task of the paper: sets
of digit images labelled by the sum (or mean, or count) of their DISTINCT
digits.
"""

import dataclasses
import importlib.util

import numpy as np

from keras_laf.core.validation import check_positive_int
from keras_laf.datasets.padded_sets import SetBatches
from keras_laf.datasets.ragged_dataset import ragged_set_dataset
from keras_laf.datasets.ragged_dataset import to_padded_batches
from laf_experiments.data.aggregation_targets import check_target
from laf_experiments.data.aggregation_targets import target_values
from laf_experiments.data.constants import NUM_DIGITS
from laf_experiments.data.constants import TEST_MAX_SIZES
from laf_experiments.data.constants import TEST_PROTOCOLS
from laf_experiments.data.constants import UNIQUE_REDUCTIONS


class _LabelledSets:
    # What the sets of digits and of digit images share: each set is a row
    # of `element_rows`, indices into `element_table` (or the elements
    # themselves when it is None).

    element_table = None

    @property
    def sizes(self):
        """int64 NumPy array: the size of each set."""
        return np.array([len(row) for row in self.element_rows])

    def to_dataset(self, batch_size, shuffle=False, seed=None):
        """Builds a `tf.data.Dataset` of ragged batches of these sets.

        Args:
            batch_size: positive int, the number of sets per batch.
            shuffle: whether to shuffle the sets, afresh at every epoch.
            seed: optional int seed of the shuffling.

        Returns:
            A `tf.data.Dataset` of `(sets, labels)`: a `tf.RaggedTensor`,
            int32 `(batch, None)` for digits or float32
            `(batch, None, 784)` for images, and float32 labels
            `(batch, 1)`.

        Example:

        >>> data = make_training_sets(100, "sum")
        >>> dataset = data.to_dataset(batch_size=32, shuffle=True, seed=0)
        """
        return ragged_set_dataset(
            self.element_rows,
            self.labels,
            batch_size,
            shuffle=shuffle,
            seed=seed,
            element_table=self.element_table,
        )

    def to_padded_batches(self, batch_size, set_size, shuffle=False, seed=None):
        """Batches of these sets padded to `set_size` with their mask,
        `((padded, mask), labels)`, as `padded_set_batches` makes them:
        `tf.data` where TensorFlow is installed, else NumPy (for JAX or
        PyTorch alone).

        Example:

        >>> data = make_training_sets(100, "sum")
        >>> batches = data.to_padded_batches(32, set_size=10, shuffle=True)
        """
        return padded_set_batches(
            self.element_rows,
            self.labels,
            batch_size,
            set_size,
            shuffle=shuffle,
            seed=seed,
            element_table=self.element_table,
        )


def padded_set_batches(
    sets,
    labels,
    batch_size,
    set_size,
    shuffle=False,
    seed=None,
    element_table=None,
):
    """Sets padded to `set_size` with their mask, `((padded, mask),
    labels)` batches: `tf.data` where TensorFlow is installed, else
    `keras_laf.datasets.SetBatches`. The arguments are those of
    `SetBatches`."""
    if importlib.util.find_spec("tensorflow") is None:
        return SetBatches(
            sets,
            labels,
            batch_size,
            set_size=set_size,
            shuffle=shuffle,
            seed=seed,
            element_table=element_table,
        )
    dataset = ragged_set_dataset(
        sets,
        labels,
        batch_size,
        shuffle=shuffle,
        seed=seed,
        element_table=element_table,
    )
    return to_padded_batches(dataset, set_size=set_size)


@dataclasses.dataclass(frozen=True)
class IntegerSets(_LabelledSets):
    """Sets of digits with their labels, as NumPy arrays.

    Attributes:
        sets: list of int32 NumPy arrays, the digits of each set.
        labels: float32 NumPy array `(len(sets),)`, the target of each set.
        target: the name of the target, one of `TARGETS`.
    """

    sets: list
    labels: np.ndarray
    target: str

    @property
    def element_rows(self):
        return self.sets


@dataclasses.dataclass(frozen=True)
class MnistSets(_LabelledSets):
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
    def element_rows(self):
        return self.image_indices

    @property
    def element_table(self):
        return self.images


def sample_training_sets(num_sets, min_size=2, max_size=10, seed=0):
    """Samples sets of uniform digits, as the LAF training sets.

    Args:
        num_sets: positive int, the number of sets.
        min_size: positive int, the smallest set size.
        max_size: int, the largest set size, at least `min_size`.
        seed: non-negative int seed.

    Returns:
        List of `num_sets` int32 NumPy arrays: the size of each is uniform
        in `{min_size, ..., max_size}`, the elements uniform in `0..9`.

    Example:

    >>> sets = sample_training_sets(3, seed=0)
    >>> [len(elements) for elements in sets]
    [9, 7, 6]
    """
    _check_arguments(num_sets, min_size, max_size, seed)
    rng = np.random.default_rng(seed)
    sizes = rng.integers(min_size, max_size, size=num_sets, endpoint=True)
    digits = rng.integers(0, NUM_DIGITS, size=(num_sets, max_size))
    return _first_columns(digits, sizes)


def sample_test_sets(num_sets, max_size, min_size=2, seed=1, diversify=True):
    """Samples test sets of digits with a given maximum size.

    The diversification is described in the module docstring.

    Args:
        num_sets: positive int, the number of sets.
        max_size: int, the largest set size `M`, at least `min_size`.
        min_size: positive int, the smallest set size.
        seed: non-negative int; the generator is seeded with
            `[seed, max_size]`.
        diversify: whether to diversify the elements; if False they are
            uniform in `0..9`, as in the training sets.

    Returns:
        List of `num_sets` int32 NumPy arrays of sizes uniform in
        `{min_size, ..., max_size}`.

    Example:

    >>> sets = sample_test_sets(1000, max_size=50)
    >>> len({int(elements.max()) for elements in sets})
    10
    """
    _check_arguments(num_sets, min_size, max_size, seed)
    rng = np.random.default_rng([seed, max_size])
    sizes = rng.integers(min_size, max_size, size=num_sets, endpoint=True)
    if not diversify:
        digits = rng.integers(0, NUM_DIGITS, size=(num_sets, max_size))
        return _first_columns(digits, sizes)
    bounds = rng.integers(0, NUM_DIGITS, size=(num_sets, 2))
    low = bounds.min(axis=1, keepdims=True)
    high = bounds.max(axis=1, keepdims=True)
    values = np.arange(NUM_DIGITS)
    endpoints = (values == low) | (values == high)
    interior = (values > low) & (values < high)
    coin_flips = rng.random((num_sets, NUM_DIGITS)) < 0.5
    allowed = endpoints | (interior & coin_flips)
    # Normalised independent Gamma(1) variables: a flat Dirichlet draw.
    weights = rng.gamma(1.0, size=(num_sets, NUM_DIGITS)) * allowed
    cumulative = np.cumsum(weights, axis=1)
    cumulative /= cumulative[:, -1:]
    uniforms = rng.random((num_sets, max_size))
    # Inverse transform: the digit is the number of cumulative weights not
    # above the uniform draw; digits of zero weight are never chosen.
    digits = (cumulative[:, None, :] <= uniforms[:, :, None]).sum(axis=2)
    return _first_columns(digits, sizes)


def sample_authors_test_sets(num_sets, target, max_size, min_size=2, seed=1):
    """Samples test sets of digits as the paper's authors test `target`.

    The sets depend on the target (see the module docstring): exactly
    `max_size` uniform digits for sum, mean, median and the moments;
    sizes in the top fifth of `{min_size, ..., max_size}` for the count
    and its inverse; labels cycling through the digits for the extrema.

    Args:
        num_sets: positive int, the number of sets.
        target: the label, one of `TARGETS`.
        max_size: int, the largest set size `M`, at least `min_size`.
        min_size: positive int, the smallest set size.
        seed: non-negative int; the generator is seeded with
            `[seed, max_size]`.

    Returns:
        List of `num_sets` int32 NumPy arrays.

    Example:

    >>> sets = sample_authors_test_sets(20, "max", max_size=50)
    >>> [int(elements.max()) for elements in sets[:12]]
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1]
    >>> {len(elements) for elements in sets}
    {50}
    """
    check_target(target)
    _check_arguments(num_sets, min_size, max_size, seed)
    rng = np.random.default_rng([seed, max_size])
    if target in ("count", "inverse_count"):
        smallest = max(min_size, -(-4 * max_size // 5))
        sizes = rng.integers(smallest, max_size, size=num_sets, endpoint=True)
    else:
        sizes = np.full(num_sets, max_size)
    # (num_sets, 1) each: the digits the elements are drawn between.
    low = np.zeros((num_sets, 1), "int64")
    high = np.full((num_sets, 1), NUM_DIGITS - 1)
    cycle = np.arange(num_sets)[:, None]
    if target == "max":
        high = cycle % NUM_DIGITS
    elif target == "min":
        low = cycle % NUM_DIGITS
    elif target in ("max_minus_min", "min_over_max"):
        pairs = np.array(
            [
                (first, second)
                for first in range(NUM_DIGITS)
                for second in range(first, NUM_DIGITS)
            ]
        )
        low, high = np.split(pairs[cycle[:, 0] % len(pairs)], 2, axis=1)
    digits = low + np.floor(
        rng.random((num_sets, max_size)) * (high - low + 1)
    ).astype("int64")
    if target in ("max", "min", "max_minus_min", "min_over_max"):
        # The extremes the label names are in the set, at random places.
        first, second = _two_positions(rng, sizes)
        rows = np.arange(num_sets)
        digits[rows, first] = (low if target == "min" else high)[:, 0]
        if target in ("max_minus_min", "min_over_max"):
            digits[rows, second] = low[:, 0]
    return _first_columns(digits, sizes)


def _two_positions(rng, sizes):
    # Two distinct random positions below each size (sizes >= 2).
    first = np.floor(rng.random(len(sizes)) * sizes).astype("int64")
    offset = 1 + np.floor(rng.random(len(sizes)) * (sizes - 1)).astype("int64")
    return first, (first + offset) % sizes


def make_training_sets(
    num_sets, target, min_size=2, max_size=10, seed=0, digit_images=None
):
    """Samples labelled training sets of digits (see `sample_training_sets`).

    Args:
        num_sets: positive int, the number of sets.
        target: the label, one of `TARGETS`.
        min_size: positive int, the smallest set size.
        max_size: int, the largest set size, at least `min_size`.
        seed: non-negative int seed.
        digit_images: optional `DigitImages` pool (the train split in the
            paper): the digits become images drawn from it.

    Returns:
        An `IntegerSets`, or an `MnistSets` with `digit_images`.

    Example:

    >>> data = make_training_sets(100_000, "max")
    >>> dataset = data.to_dataset(batch_size=64, shuffle=True, seed=0)
    """
    check_target(target)
    sets = sample_training_sets(num_sets, min_size, max_size, seed)
    return _label(sets, target, digit_images, [seed, 0])


def make_test_sets(
    num_sets,
    target,
    max_size,
    min_size=2,
    seed=1,
    diversify=True,
    digit_images=None,
    protocol="diversified",
):
    """Samples labelled test sets of digits (see `sample_test_sets`).

    Args:
        num_sets: positive int, the number of sets.
        target: the label, one of `TARGETS`.
        max_size: int, the largest set size `M`, at least `min_size`.
        min_size: positive int, the smallest set size.
        seed: non-negative int seed.
        diversify: whether to diversify the elements (with the
            `"diversified"` protocol only).
        digit_images: optional `DigitImages` pool (the test split in the
            paper): the digits become images drawn from it.
        protocol: `"diversified"` (sizes uniform in `{min_size, ..., M}`,
            see `sample_test_sets`) or `"authors"` (the paper's authors'
            test sets, see `sample_authors_test_sets`).

    Returns:
        An `IntegerSets`, or an `MnistSets` with `digit_images`.

    Example:

    >>> data = make_test_sets(1000, "median", max_size=50)
    >>> per_size_labels = data.labels[data.sizes == 50]
    """
    check_target(target)
    if protocol not in TEST_PROTOCOLS:
        raise ValueError(
            f"`protocol` must be one of {list(TEST_PROTOCOLS)}. "
            f"Received: protocol={protocol!r}"
        )
    if protocol == "authors":
        sets = sample_authors_test_sets(
            num_sets, target, max_size, min_size, seed
        )
    else:
        sets = sample_test_sets(num_sets, max_size, min_size, seed, diversify)
    return _label(sets, target, digit_images, [seed, max_size, 0])


def make_test_sets_by_max_size(
    num_sets,
    target,
    max_sizes=TEST_MAX_SIZES,
    min_size=2,
    seed=1,
    diversify=True,
    digit_images=None,
    protocol="diversified",
):
    """Samples labelled test sets for several maximum sizes.

    Args:
        num_sets: positive int, the number of sets for each maximum size.
        target: the label, one of `TARGETS`.
        max_sizes: sequence of maximum sizes `M`, by default
            `5, 10, ..., 50` as in the paper.
        min_size: positive int, the smallest set size.
        seed: non-negative int seed.
        diversify: whether to diversify the elements.
        digit_images: optional `DigitImages` pool: image sets.
        protocol: `"diversified"` or `"authors"` (see `make_test_sets`).

    Returns:
        Dict mapping each maximum size to an `IntegerSets` (an `MnistSets`
        with `digit_images`).

    Example:

    >>> suite = make_test_sets_by_max_size(1000, "count")
    >>> sorted(suite)[:3]
    [5, 10, 15]
    """
    return {
        max_size: make_test_sets(
            num_sets,
            target,
            max_size,
            min_size,
            seed,
            diversify,
            digit_images,
            protocol,
        )
        for max_size in max_sizes
    }


def make_test_datasets(
    num_sets,
    target,
    batch_size,
    max_sizes=TEST_MAX_SIZES,
    min_size=2,
    seed=1,
    diversify=True,
    digit_images=None,
):
    """Builds ragged test datasets of digit sets for several maximum sizes.

    Args:
        num_sets: positive int, the number of sets for each maximum size.
        target: the label, one of `TARGETS`.
        batch_size: positive int, the number of sets per batch.
        max_sizes: sequence of maximum sizes `M`, by default
            `5, 10, ..., 50` as in the paper.
        min_size: positive int, the smallest set size.
        seed: non-negative int seed.
        diversify: whether to diversify the elements.
        digit_images: optional `DigitImages` pool: image sets.

    Returns:
        Dict mapping each maximum size to an unshuffled `tf.data.Dataset`
        of `(sets, labels)` (see `IntegerSets.to_dataset`).

    Example:

    >>> datasets = make_test_datasets(1000, "mean", batch_size=128)
    >>> dataset_for_size_50 = datasets[50]
    """
    suite = make_test_sets_by_max_size(
        num_sets, target, max_sizes, min_size, seed, diversify, digit_images
    )
    return {
        max_size: data.to_dataset(batch_size)
        for max_size, data in suite.items()
    }


def _label(sets, target, digit_images, image_seed):
    labels = target_values(target, sets).astype("float32")
    if digit_images is None:
        return IntegerSets(sets=sets, labels=labels, target=target)
    rng = np.random.default_rng(image_seed)
    return _with_images(sets, labels, target, digit_images, rng)


def _first_columns(matrix, sizes):
    # Row i of `matrix` cut to its first sizes[i] columns.
    return [
        row[:size].astype("int32")
        for row, size in zip(matrix, sizes, strict=True)
    ]


def _check_arguments(num_sets, min_size, max_size, seed):
    check_positive_int("num_sets", num_sets)
    check_positive_int("min_size", min_size)
    if not isinstance(max_size, (int, np.integer)) or max_size < min_size:
        raise ValueError(
            "`max_size` must be an int no smaller than `min_size` "
            f"({min_size}). Received: {max_size}"
        )
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"`seed` must be a non-negative int. Received: {seed}")


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

    >>> from laf_experiments.data import load_digit_images
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
