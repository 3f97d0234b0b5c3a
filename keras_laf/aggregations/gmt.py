"""The Graph Multiset Transformer pooling: PMA(k), SAB, PMA(1)."""

from keras import ops

from keras_laf.aggregations.pooling import SetPooling
from keras_laf.aggregations.registry import register
from keras_laf.core.sets import SegmentSets
from keras_laf.core.validation import check_positive_int
from keras_laf.layers.attention import PMA
from keras_laf.layers.attention import SAB


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
    Sets given by segment ids are padded first, which needs the TensorFlow
    backend; on JAX and PyTorch a ValueError says how to pad them.

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
        `(num_elements, features)` with `segment_ids` (TensorFlow only).

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
        self.seed_pooling.build((None, None, input_shape[-1]))
        seeds_shape = (None, self.num_seeds, self.dim)
        for encoder in self.encoders:
            encoder.build(seeds_shape)
        self.pooling.build(seeds_shape)

    def output_width(self, features):
        return self.dim

    def pool(self, values, sets, training=None):
        if isinstance(sets, SegmentSets):
            values, sets = sets.to_padded(values)
        # (num_sets, num_seeds, dim)
        seeds = self.seed_pooling(values, mask=sets.mask, training=training)
        for encoder in self.encoders:
            seeds = encoder(seeds, training=training)
        pooled = self.pooling(seeds, training=training)  # (num_sets, 1, dim)
        return ops.squeeze(pooled, axis=1)

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
