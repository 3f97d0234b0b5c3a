"""The Graph Multiset Transformer pooling: PMA(k), SAB, PMA(1)."""

import numpy as np
from keras import ops

from keras_laf.aggregations.pooling import SetPooling
from keras_laf.aggregations.registry import register
from keras_laf.core import backend
from keras_laf.core.sets import SegmentSets
from keras_laf.core.sets import segment_padding_compiles
from keras_laf.core.validation import check_positive_int
from keras_laf.layers.attention import PMA
from keras_laf.layers.attention import SAB


def size_classes(num_elements, num_sets, growth=4):
    """Padded batches that hold any `num_sets` sets of `num_elements`
    elements in all, each batch for sets of similar sizes.

    The size of the largest set is a value, not a shape, so a padded batch
    of every set that a traced JAX function (`jax.jit`, `Model.fit`) can
    compile must be `num_elements` wide, `num_sets * num_elements` slots:
    for a neighbour aggregation, nodes times edges. Batches by size need
    fewer: class 0 pads every set to the mean size, rounded up; each next
    class holds the sets larger than the width `w` of the class before,
    at most `num_elements // (w + 1)` of them, padded to `growth * w`
    (at most `num_elements`). A class past the first then has fewer than
    `growth * num_elements` slots, and all classes fewer than
    `num_elements + num_sets + growth * num_elements *
    ceil(log_growth(num_sets))`. Growth 4 gives the fewest classes
    (`PMA` calls) for the smallest such bound.

    Args:
        num_elements: int, the number of elements of all sets.
        num_sets: int, the number of sets.
        growth: int, the ratio of the widths of successive classes.
            Defaults to `4`.

    Returns:
        A list of `(width, num_rows)` pairs of ints, widths increasing:
        class `t` holds the sets of more than `width[t - 1]` and at most
        `width[t]` elements (class 0 from 0 elements) in `num_rows` rows.

    Example:

    >>> size_classes(num_elements=64, num_sets=16)
    [(4, 16), (16, 12), (64, 3)]
    """
    width = max(1, -(-num_elements // max(1, num_sets)))
    classes = [(width, num_sets)]
    while width < num_elements:
        num_rows = min(num_sets, num_elements // (width + 1))
        width = min(num_elements, growth * width)
        classes.append((width, num_rows))
    return classes


@register("gmt", dim=32)
class GraphMultisetTransformer(SetPooling):
    """Graph Multiset Transformer pooling: `PMA(k) -> SAB -> PMA(1)`.

    The pooling of Baek, Kang, Hwang, "Accurate Learning of Graph
    Representations with Graph Multiset Pooling", ICLR 2021, as PyTorch
    Geometric's `GraphMultisetTransformer` builds it from the Set
    Transformer's blocks (`keras_laf.PMA`, `keras_laf.SAB`): `num_seeds`
    seeds attend to the elements of each set, `num_encoder_blocks` `SAB`s
    let the seeds' outputs attend to each other, and one seed pools them.
    Padded elements take no part; an empty set gives a learned constant.

    Sets given by segment ids (a neighbour aggregation, a graph readout)
    are padded first. TensorFlow pads them to the largest set through a
    ragged tensor. JAX and PyTorch gather them into padded batches of
    static shapes, which a traced JAX function needs, one batch per class
    of set sizes (`size_classes`), so that one large set does not pad all
    the others to its size: `O(num_elements * log(num_sets))` padded
    elements, against `num_sets * num_elements` for one batch as wide as
    a set can be.

    Args:
        dim: int. Width of the blocks and of the output. Must be divisible
            by `num_heads`. Defaults to `32`.
        num_heads: int. Attention heads of every block. Defaults to `1`.
        num_seeds: int. Seeds `k` of the first `PMA`. Defaults to `4`.
        num_encoder_blocks: int. `SAB`s between the two poolings. Defaults
            to `1`.
        layer_norm: bool. Whether the blocks normalise after each residual
            sum. Defaults to `False`, as in PyTorch Geometric.
        dropout: float. Dropout rate of the blocks. Defaults to `0.0`.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs, mask, segment_ids, num_segments: as for `keras_laf.LAF`.
        training: bool. Whether dropout is active.

    Input shape:
        `(batch, set_size, features)` (dense or ragged), or
        `(num_elements, features)` with `segment_ids`.

    Output shape:
        `(num_sets, dim)`.

    Example:

    >>> layer = GraphMultisetTransformer(dim=8, num_heads=2, num_seeds=3)
    >>> tuple(layer(np.random.rand(4, 5, 3)).shape)
    (4, 8)
    """

    def __init__(
        self,
        dim=32,
        num_heads=1,
        num_seeds=4,
        num_encoder_blocks=1,
        layer_norm=False,
        dropout=0.0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.dim = check_positive_int("dim", dim)
        self.num_heads = check_positive_int("num_heads", num_heads)
        self.num_seeds = check_positive_int("num_seeds", num_seeds)
        self.num_encoder_blocks = check_positive_int(
            "num_encoder_blocks", num_encoder_blocks
        )
        block_kwargs = {
            "dim": self.dim,
            "num_heads": self.num_heads,
            "layer_norm": layer_norm,
            "dropout": dropout,
            "dtype": self.dtype_policy,
        }
        # The blocks check `dim`, `num_heads`, `layer_norm` and `dropout`.
        self.seed_pooling = PMA(
            num_seeds=self.num_seeds, name="seed_pooling", **block_kwargs
        )
        self.encoders = [
            SAB(name=f"encoder_{index}", **block_kwargs)
            for index in range(self.num_encoder_blocks)
        ]
        self.pooling = PMA(num_seeds=1, name="pooling", **block_kwargs)
        self.layer_norm = layer_norm
        self.dropout = dropout

    def build(self, input_shape):
        super().build(input_shape)
        self.supports_jit = segment_padding_compiles(input_shape)
        self.seed_pooling.build((None, None, input_shape[-1]))
        seeds_shape = (None, self.num_seeds, self.dim)
        for encoder in self.encoders:
            encoder.build(seeds_shape)
        self.pooling.build(seeds_shape)

    def output_width(self, features):
        return self.dim

    def pool(self, values, sets, training=None):
        if isinstance(sets, SegmentSets) and backend.takes_ragged_tensors():
            # Every set padded to the largest, a size known at run time.
            values, sets = sets.to_padded(values)
        if isinstance(sets, SegmentSets):
            seeds = self._pool_by_size(values, sets, training)
        else:
            # (num_sets, num_seeds, dim)
            seeds = self.seed_pooling(values, mask=sets.mask, training=training)
        for encoder in self.encoders:
            seeds = encoder(seeds, training=training)
        pooled = self.pooling(seeds, training=training)  # (num_sets, 1, dim)
        return ops.squeeze(pooled, axis=1)

    def _pool_by_size(self, values, sets, training):
        """`seed_pooling` of sets given by segment ids, `(num_segments,
        num_seeds, dim)`, padded by class of sizes (`size_classes`)."""
        num_sets = int(sets.num_segments)
        classes = size_classes(values.shape[0], num_sets)
        # (num_sets,): the class of each set, the number of class widths
        # below its size; the last width bounds every size.
        sizes = ops.cast(sets.sizes(), "int32")
        widths = ops.convert_to_tensor(
            [width for width, _ in classes[:-1]], "int32"
        )
        set_classes = ops.sum(
            ops.cast(sizes[:, None] > widths, "int32"), axis=1
        )
        # (num_sets,): the sets of class 0 first, then of class 1, ...
        order = ops.argsort(set_classes)
        in_class = ops.cast(
            set_classes[:, None] == ops.arange(len(classes), dtype="int32"),
            "int32",
        )
        counts = ops.sum(in_class, axis=0)  # (num_classes,)
        firsts = ops.cumsum(counts) - counts  # first position in `order`
        seeds = []
        for index, (width, num_rows) in enumerate(classes):
            rows = ops.arange(num_rows, dtype="int32")
            # The sets of the class, then empty rows (index num_sets).
            positions = ops.minimum(firsts[index] + rows, num_sets - 1)
            members = ops.where(
                rows < counts[index], ops.take(order, positions), num_sets
            )
            padded, padded_sets = sets.to_padded(values, members, width)
            # (num_rows, num_seeds, dim)
            seeds.append(
                self.seed_pooling(
                    padded, mask=padded_sets.mask, training=training
                )
            )
        # Each set's row: the first row of its class, plus its rank there.
        first_rows = ops.convert_to_tensor(
            np.cumsum([0] + [rows for _, rows in classes[:-1]]), "int32"
        )
        ranks = ops.argsort(order) - ops.take(firsts, set_classes)
        rows = ops.take(first_rows, set_classes) + ranks
        return ops.take(ops.concatenate(seeds, axis=0), rows, axis=0)

    def get_config(self):
        return {
            **super().get_config(),
            "dim": self.dim,
            "num_heads": self.num_heads,
            "num_seeds": self.num_seeds,
            "num_encoder_blocks": self.num_encoder_blocks,
            "layer_norm": self.layer_norm,
            "dropout": self.dropout,
        }
