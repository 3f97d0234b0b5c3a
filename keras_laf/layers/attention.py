"""Set Transformer attention blocks: `MAB`, `SAB`, `ISAB` and `PMA`.

The blocks of Lee, Lee, Kim, Kosiorek, Choi, Teh, "Set Transformer: A
Framework for Attention-based Permutation-Invariant Neural Networks",
ICML 2019, built on `keras.layers.MultiHeadAttention`, `Dense` and
`LayerNormalization`.

Every block accepts a batch of sets as a dense tensor
`(batch, set_size, features)` with an optional boolean mask
`(batch, set_size)` (an upstream Keras mask, e.g. from `Masking` or
`Embedding(mask_zero=True)`, arrives as that mask), or as a
`tf.RaggedTensor` `(batch, None, features)`. Padded elements never serve as
attention keys, so a padded batch gives, at the real positions, the output
of each set alone.
"""

import keras
from keras import ops

from keras_laf.core.sets import from_padded
from keras_laf.core.sets import to_padded
from keras_laf.core.validation import check_bool
from keras_laf.core.validation import check_number
from keras_laf.core.validation import check_positive_int
from keras_laf.core.validation import check_positive_number
from keras_laf.core.validation import check_shape
from keras_laf.core.validation import clone_initializer


def _check_set_shape(shape, layer, argument):
    return check_shape(
        layer, argument, shape, (3,), "(batch, set_size, features)"
    )


def _tile_over_batch(weight, like, dtype):
    """Repeats a `(rows, dim)` weight for every set: `(batch, rows, dim)`."""
    weight = ops.cast(weight, dtype)
    batch_size = ops.shape(like)[0]
    return ops.broadcast_to(
        ops.expand_dims(weight, 0), (batch_size, *weight.shape)
    )


class _SetAttentionLayer(keras.layers.Layer):
    """Arguments, checks and config shared by the Set Transformer blocks."""

    def __init__(
        self,
        dim,
        num_heads,
        layer_norm=True,
        layer_norm_epsilon=1e-5,
        dropout=0.0,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.dim = check_positive_int("dim", dim)
        self.num_heads = check_positive_int("num_heads", num_heads)
        if self.dim % self.num_heads:
            raise ValueError(
                "`dim` must be divisible by `num_heads`; each head gets "
                f"dim // num_heads features. Received: dim={dim}, "
                f"num_heads={num_heads}"
            )
        self.layer_norm = check_bool("layer_norm", layer_norm)
        self.layer_norm_epsilon = check_positive_number(
            "layer_norm_epsilon", layer_norm_epsilon, allow_inf=True
        )
        self.dropout = check_number("dropout", dropout, minimum=0, below=1)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.kernel_regularizer = keras.regularizers.get(kernel_regularizer)
        self.bias_regularizer = keras.regularizers.get(bias_regularizer)
        self.supports_masking = True
        # The sets (of queries, for MAB): (batch, set_size, features).
        self.input_spec = keras.layers.InputSpec(ndim=3)

    def _fix_features(self, shape, argument="inputs"):
        """Checks the shape of the sets when the layer is built, and fixes
        their number of features in the `InputSpec`."""
        shape = _check_set_shape(shape, self, argument)
        self.input_spec = keras.layers.InputSpec(ndim=3, axes={-1: shape[-1]})
        return shape

    def _block_kwargs(self):
        """Arguments of a nested `MAB`."""
        return {
            "dim": self.dim,
            "num_heads": self.num_heads,
            "layer_norm": self.layer_norm,
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "dropout": self.dropout,
            **self._weight_kwargs(),
        }

    def _weight_kwargs(self):
        """Initializers, regularizers and dtype of a nested layer."""
        return {
            # A fresh copy for each layer: one initializer instance draws
            # the same values at every call.
            "kernel_initializer": clone_initializer(self.kernel_initializer),
            "bias_initializer": clone_initializer(self.bias_initializer),
            "kernel_regularizer": self.kernel_regularizer,
            "bias_regularizer": self.bias_regularizer,
            "dtype": self.dtype_policy,
        }

    def get_config(self):
        return {
            **super().get_config(),
            "dim": self.dim,
            "num_heads": self.num_heads,
            "layer_norm": self.layer_norm,
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "dropout": self.dropout,
            "kernel_initializer": keras.initializers.serialize(
                self.kernel_initializer
            ),
            "bias_initializer": keras.initializers.serialize(
                self.bias_initializer
            ),
            "kernel_regularizer": keras.regularizers.serialize(
                self.kernel_regularizer
            ),
            "bias_regularizer": keras.regularizers.serialize(
                self.bias_regularizer
            ),
        }


@keras.saving.register_keras_serializable(package="keras_laf")
class MAB(_SetAttentionLayer):
    """Multihead attention block: each query element attends to a set.

    The block of the Set Transformer (Lee et al., ICML 2019):

        H = LayerNorm(X + Multihead(X, Y, Y))
        MAB(X, Y) = LayerNorm(H + rFF(H))

    where `rFF(H) = relu(H W + b)` is a row-wise feed-forward layer of width
    `dim`, as in the authors' implementation. Without `layer_norm` the two
    layer normalizations are left out. `Multihead` is a
    `keras.layers.MultiHeadAttention` with `num_heads` heads of width
    `dim // num_heads` (scaled by `1 / sqrt(dim // num_heads)`), its own
    query, key and value projections and an output projection to `dim`, so
    `Y` may have any width. When `X` is not `dim` wide it is first mapped to
    `dim` by a `Dense` layer (`query_projection`), which then carries the
    residual.

    Padded elements of `Y` are no attention keys. A query whose set `Y` is
    empty (every element padded) attends to nothing: its attention term is
    zero, so its output is `LayerNorm(H + rFF(H))` with `H = LayerNorm(X)`
    (`X` after `query_projection`, if any).
    Padded rows of `X` give zero outputs.

    Reference: Lee, Lee, Kim, Kosiorek, Choi, Teh, "Set Transformer: A
    Framework for Attention-based Permutation-Invariant Neural Networks",
    ICML 2019.

    Args:
        dim: int. Width `d` of the block: of the attention output, the
            row-wise feed-forward layer and the output. Must be divisible by
            `num_heads`.
        num_heads: int. Number of attention heads, each of width
            `dim // num_heads`.
        layer_norm: bool. Whether to apply layer normalization after each
            residual sum, as in the paper. Defaults to `True`.
        layer_norm_epsilon: float. Epsilon of the layer normalizations.
            Defaults to `1e-5`.
        dropout: float. Dropout rate of the attention weights and of the
            attention and feed-forward outputs before each residual sum.
            Defaults to `0.0`.
        kernel_initializer: initializer of the dense and attention kernels.
            Defaults to `"glorot_uniform"`.
        bias_initializer: initializer of the biases. Defaults to `"zeros"`.
        kernel_regularizer: optional regularizer of the kernels.
        bias_regularizer: optional regularizer of the biases.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        query: the sets X whose elements attend, a dense tensor
            `(batch, num_queries, query_features)` or a `tf.RaggedTensor`
            `(batch, None, query_features)`.
        value: the sets Y attended to, a dense tensor
            `(batch, set_size, value_features)` or a `tf.RaggedTensor`
            `(batch, None, value_features)`.
        query_mask: optional boolean tensor `(batch, num_queries)`, True for
            real elements of a dense `query`; padded rows of the output are
            zero. A Keras mask of `query` arrives here too.
        value_mask: optional boolean tensor `(batch, set_size)`, True for
            real elements of a dense `value`; padded elements are not
            attended to. A Keras mask of `value` arrives here too.
        training: bool. Whether dropout is active.

    Input shape:
        `query`: `(batch, num_queries, query_features)`; `value`:
        `(batch, set_size, value_features)`; dense or ragged.

    Output shape:
        `(batch, num_queries, dim)`, a `tf.RaggedTensor` with the row
        lengths of `query` when `query` is ragged. The output keeps the Keras
        mask of `query`.

    Example:

    >>> block = MAB(dim=8, num_heads=2)
    >>> x = np.random.rand(4, 5, 3)
    >>> y = np.random.rand(4, 7, 6)
    >>> tuple(block(x, y).shape)
    (4, 5, 8)
    """

    def build(self, query_shape, value_shape):
        query_shape = self._fix_features(query_shape, "query")
        value_shape = _check_set_shape(value_shape, self, "value")
        hidden_shape = (*query_shape[:-1], self.dim)
        if query_shape[-1] != self.dim:
            self._query_projection = keras.layers.Dense(
                self.dim, name="query_projection", **self._weight_kwargs()
            )
            self._query_projection.build(query_shape)
        else:
            self._query_projection = None
        self._attention = keras.layers.MultiHeadAttention(
            num_heads=self.num_heads,
            key_dim=self.dim // self.num_heads,
            output_shape=self.dim,
            dropout=self.dropout,
            name="attention",
            **self._weight_kwargs(),
        )
        self._attention.build(hidden_shape, value_shape)
        self._attention_dropout = keras.layers.Dropout(
            self.dropout, name="attention_dropout", dtype=self.dtype_policy
        )
        self._feedforward = keras.layers.Dense(
            self.dim,
            activation="relu",
            name="feedforward",
            **self._weight_kwargs(),
        )
        self._feedforward.build(hidden_shape)
        self._feedforward_dropout = keras.layers.Dropout(
            self.dropout, name="feedforward_dropout", dtype=self.dtype_policy
        )
        if self.layer_norm:
            self._attention_layer_norm = keras.layers.LayerNormalization(
                epsilon=self.layer_norm_epsilon,
                name="attention_layer_norm",
                dtype=self.dtype_policy,
            )
            self._attention_layer_norm.build(hidden_shape)
            self._feedforward_layer_norm = keras.layers.LayerNormalization(
                epsilon=self.layer_norm_epsilon,
                name="feedforward_layer_norm",
                dtype=self.dtype_policy,
            )
            self._feedforward_layer_norm.build(hidden_shape)
        else:
            self._attention_layer_norm = None
            self._feedforward_layer_norm = None

    def call(
        self, query, value, query_mask=None, value_mask=None, training=None
    ):
        query, query_mask, row_lengths = to_padded(query, query_mask)
        value, value_mask, _ = to_padded(value, value_mask)
        query = ops.cast(query, self.compute_dtype)
        value = ops.cast(value, self.compute_dtype)
        if self._query_projection is not None:
            query = self._query_projection(query)  # (batch, queries, dim)
        # The value mask (batch, set_size) becomes the attention mask
        # (batch, 1, set_size): no query attends to a padded element. Padded
        # queries need no mask: their rows are zeroed below.
        attention = self._attention(
            query, value, value_mask=value_mask, training=training
        )  # (batch, queries, dim)
        if value_mask is not None:
            # A query with no key left gets uniform weights over the padding
            # or all-zero weights, depending on the attention kernel; make it
            # attend to nothing in both cases.
            nonempty = ops.any(value_mask, axis=1)[:, None, None]
            attention = ops.where(nonempty, attention, 0)
        hidden = query + self._attention_dropout(attention, training=training)
        if self._attention_layer_norm is not None:
            hidden = self._attention_layer_norm(hidden)
        feedforward = self._feedforward(hidden)  # (batch, queries, dim)
        outputs = hidden + self._feedforward_dropout(
            feedforward, training=training
        )
        if self._feedforward_layer_norm is not None:
            outputs = self._feedforward_layer_norm(outputs)
        return from_padded(outputs, query_mask, row_lengths)

    def compute_output_shape(self, query_shape, value_shape):
        query_shape = _check_set_shape(query_shape, self, "query")
        _check_set_shape(value_shape, self, "value")
        return (*query_shape[:-1], self.dim)

    def compute_mask(self, query, previous_mask=None):
        # One output row per query element: the query's mask carries over.
        return previous_mask


@keras.saving.register_keras_serializable(package="keras_laf")
class SAB(_SetAttentionLayer):
    """Set attention block: self-attention among the elements of each set.

    `SAB(X) = MAB(X, X)`, the permutation-equivariant block of the Set
    Transformer (Lee et al., ICML 2019): every element attends to every
    real element of its set, itself included, so permuting the elements
    permutes the outputs. Its cost is quadratic in the set size; `ISAB` is
    linear. See `MAB` for the block itself.

    Padded elements are no attention keys and get zero outputs; the output
    keeps the input's mask. The elements of an empty set are all padding,
    so it stays empty.

    Reference: Lee, Lee, Kim, Kosiorek, Choi, Teh, "Set Transformer: A
    Framework for Attention-based Permutation-Invariant Neural Networks",
    ICML 2019.

    Args:
        dim: int. Width `d` of the block: of the attention output, the
            row-wise feed-forward layer and the output. Must be divisible by
            `num_heads`.
        num_heads: int. Number of attention heads, each of width
            `dim // num_heads`.
        layer_norm: bool. Whether to apply layer normalization after each
            residual sum, as in the paper. Defaults to `True`.
        layer_norm_epsilon: float. Epsilon of the layer normalizations.
            Defaults to `1e-5`.
        dropout: float. Dropout rate of the attention weights and of the
            attention and feed-forward outputs before each residual sum.
            Defaults to `0.0`.
        kernel_initializer: initializer of the dense and attention kernels.
            Defaults to `"glorot_uniform"`.
        bias_initializer: initializer of the biases. Defaults to `"zeros"`.
        kernel_regularizer: optional regularizer of the kernels.
        bias_regularizer: optional regularizer of the biases.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: a dense tensor `(batch, set_size, features)` or a
            `tf.RaggedTensor` `(batch, None, features)`.
        mask: optional boolean tensor `(batch, set_size)`, True for real
            elements of dense inputs; a Keras mask from an upstream layer
            (`Masking`, `Embedding(mask_zero=True)`) arrives here too.
        training: bool. Whether dropout is active.

    Input shape:
        `(batch, set_size, features)`, dense or ragged.

    Output shape:
        `(batch, set_size, dim)`: dense with the input's mask for dense
        inputs, a `tf.RaggedTensor` with the same row lengths for ragged
        inputs.

    Example:

    >>> inputs = keras.Input(shape=(None, 3))
    >>> x = keras.layers.Masking()(inputs)
    >>> x = SAB(dim=8, num_heads=2)(x)
    >>> outputs = PMA(dim=8, num_heads=2, num_seeds=1)(x)
    >>> keras.Model(inputs, outputs).output_shape
    (None, 1, 8)
    """

    def build(self, input_shape):
        input_shape = self._fix_features(input_shape)
        self._block = MAB(name="mab", **self._block_kwargs())
        self._block.build(input_shape, input_shape)

    def call(self, inputs, mask=None, training=None):
        values, mask, row_lengths = to_padded(inputs, mask)
        values = ops.cast(values, self.compute_dtype)
        outputs = self._block(
            values,
            values,
            query_mask=mask,
            value_mask=mask,
            training=training,
        )  # (batch, set_size, dim)
        return from_padded(outputs, mask, row_lengths)

    def compute_output_shape(self, input_shape):
        input_shape = _check_set_shape(input_shape, self, "inputs")
        return (*input_shape[:-1], self.dim)

    def compute_mask(self, inputs, mask=None):
        return mask


@keras.saving.register_keras_serializable(package="keras_laf")
class ISAB(_SetAttentionLayer):
    """Induced set attention block: self-attention through inducing points.

    `ISAB(X) = MAB(X, H)` with `H = MAB(I, X)`, where `I` holds
    `num_inducing` learned inducing points of width `dim` (Lee et al., ICML
    2019). The inducing points first summarize each set into `H`, then
    every element attends to that summary: permutation-equivariant like
    `SAB`, at a cost linear in the set size. See `MAB` for the blocks.

    Padded elements are no attention keys and get zero outputs; the output
    keeps the input's mask. For an empty set the summary `H` is the
    inducing points passed through a block with a zero attention term, and
    the set stays empty.

    Reference: Lee, Lee, Kim, Kosiorek, Choi, Teh, "Set Transformer: A
    Framework for Attention-based Permutation-Invariant Neural Networks",
    ICML 2019.

    Args:
        dim: int. Width `d` of the block: of the attention output, the
            row-wise feed-forward layer and the output. Must be divisible by
            `num_heads`.
        num_heads: int. Number of attention heads, each of width
            `dim // num_heads`.
        num_inducing: int. Number of inducing points `m`.
        layer_norm: bool. Whether to apply layer normalization after each
            residual sum, as in the paper. Defaults to `True`.
        layer_norm_epsilon: float. Epsilon of the layer normalizations.
            Defaults to `1e-5`.
        dropout: float. Dropout rate of the attention weights and of the
            attention and feed-forward outputs before each residual sum.
            Defaults to `0.0`.
        kernel_initializer: initializer of the dense and attention kernels.
            Defaults to `"glorot_uniform"`.
        bias_initializer: initializer of the biases. Defaults to `"zeros"`.
        kernel_regularizer: optional regularizer of the kernels.
        bias_regularizer: optional regularizer of the biases.
        inducing_points_initializer: initializer of the inducing points,
            shape `(num_inducing, dim)`. Defaults to `"glorot_uniform"`.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: a dense tensor `(batch, set_size, features)` or a
            `tf.RaggedTensor` `(batch, None, features)`.
        mask: optional boolean tensor `(batch, set_size)`, True for real
            elements of dense inputs; a Keras mask from an upstream layer
            (`Masking`, `Embedding(mask_zero=True)`) arrives here too.
        training: bool. Whether dropout is active.

    Input shape:
        `(batch, set_size, features)`, dense or ragged.

    Output shape:
        `(batch, set_size, dim)`: dense with the input's mask for dense
        inputs, a `tf.RaggedTensor` with the same row lengths for ragged
        inputs.

    Example:

    >>> layer = ISAB(dim=8, num_heads=2, num_inducing=4)
    >>> sets = tf.ragged.constant(
    ...     [[[0.1, 0.2], [0.3, 0.4]], [[0.5, 0.6]]], ragged_rank=1
    ... )
    >>> layer(sets).row_lengths().numpy()
    array([2, 1])
    """

    def __init__(
        self,
        dim,
        num_heads,
        num_inducing,
        layer_norm=True,
        layer_norm_epsilon=1e-5,
        dropout=0.0,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        inducing_points_initializer="glorot_uniform",
        **kwargs,
    ):
        super().__init__(
            dim,
            num_heads,
            layer_norm=layer_norm,
            layer_norm_epsilon=layer_norm_epsilon,
            dropout=dropout,
            kernel_initializer=kernel_initializer,
            bias_initializer=bias_initializer,
            kernel_regularizer=kernel_regularizer,
            bias_regularizer=bias_regularizer,
            **kwargs,
        )
        self.num_inducing = check_positive_int("num_inducing", num_inducing)
        self.inducing_points_initializer = keras.initializers.get(
            inducing_points_initializer
        )

    def build(self, input_shape):
        input_shape = self._fix_features(input_shape)
        self.inducing_points = self.add_weight(
            name="inducing_points",
            shape=(self.num_inducing, self.dim),
            initializer=self.inducing_points_initializer,
        )
        inducing_shape = (input_shape[0], self.num_inducing, self.dim)
        self._inducing_block = MAB(name="inducing_mab", **self._block_kwargs())
        self._inducing_block.build(inducing_shape, input_shape)
        self._output_block = MAB(name="output_mab", **self._block_kwargs())
        self._output_block.build(input_shape, inducing_shape)

    def call(self, inputs, mask=None, training=None):
        values, mask, row_lengths = to_padded(inputs, mask)
        values = ops.cast(values, self.compute_dtype)
        inducing_points = _tile_over_batch(
            self.inducing_points, values, self.compute_dtype
        )  # (batch, num_inducing, dim)
        summary = self._inducing_block(
            inducing_points, values, value_mask=mask, training=training
        )  # (batch, num_inducing, dim)
        outputs = self._output_block(
            values, summary, query_mask=mask, training=training
        )  # (batch, set_size, dim)
        return from_padded(outputs, mask, row_lengths)

    def compute_output_shape(self, input_shape):
        input_shape = _check_set_shape(input_shape, self, "inputs")
        return (*input_shape[:-1], self.dim)

    def compute_mask(self, inputs, mask=None):
        return mask

    def get_config(self):
        return {
            **super().get_config(),
            "num_inducing": self.num_inducing,
            "inducing_points_initializer": keras.initializers.serialize(
                self.inducing_points_initializer
            ),
        }


@keras.saving.register_keras_serializable(package="keras_laf")
class PMA(_SetAttentionLayer):
    """Pooling by multihead attention: `num_seeds` learned queries per set.

    `PMA(Z) = MAB(S, rFF(Z))`, where `S` holds `num_seeds` learned seed
    vectors of width `dim` and `rFF(Z) = relu(Z W + b)` is a row-wise
    feed-forward layer of width `dim`, as in the paper (the authors'
    implementation leaves this `rFF` out). Each seed attends to the
    elements of the set, so the output is invariant to their order: with
    one seed it is the pooling of the Set Transformer's decoder, with
    several the seeds' outputs can be fed to a `SAB` to model their
    interactions (Lee et al., ICML 2019). See `MAB` for the block.

    Padded elements take no part in the pooling. An empty set gives a
    learned constant, the seeds passed through a block with a zero attention
    term, the same for every empty set, never NaN.

    Reference: Lee, Lee, Kim, Kosiorek, Choi, Teh, "Set Transformer: A
    Framework for Attention-based Permutation-Invariant Neural Networks",
    ICML 2019.

    Args:
        dim: int. Width `d` of the block: of the attention output, the
            row-wise feed-forward layer and the output. Must be divisible by
            `num_heads`.
        num_heads: int. Number of attention heads, each of width
            `dim // num_heads`.
        num_seeds: int. Number of seed vectors `k`, the number of output
            vectors of each set.
        layer_norm: bool. Whether to apply layer normalization after each
            residual sum, as in the paper. Defaults to `True`.
        layer_norm_epsilon: float. Epsilon of the layer normalizations.
            Defaults to `1e-5`.
        dropout: float. Dropout rate of the attention weights and of the
            attention and feed-forward outputs before each residual sum.
            Defaults to `0.0`.
        kernel_initializer: initializer of the dense and attention kernels.
            Defaults to `"glorot_uniform"`.
        bias_initializer: initializer of the biases. Defaults to `"zeros"`.
        kernel_regularizer: optional regularizer of the kernels.
        bias_regularizer: optional regularizer of the biases.
        seeds_initializer: initializer of the seed vectors, shape
            `(num_seeds, dim)`. Defaults to `"glorot_uniform"`.
        **kwargs: base layer keyword arguments, such as `name` and `dtype`.

    Call arguments:
        inputs: a dense tensor `(batch, set_size, features)` or a
            `tf.RaggedTensor` `(batch, None, features)`.
        mask: optional boolean tensor `(batch, set_size)`, True for real
            elements of dense inputs; a Keras mask from an upstream layer
            (`Masking`, `Embedding(mask_zero=True)`) arrives here too.
        training: bool. Whether dropout is active.

    Input shape:
        `(batch, set_size, features)`, dense or ragged.

    Output shape:
        `(batch, num_seeds, dim)`, dense and without a mask: the set axis is
        pooled away.

    Example:

    >>> layer = PMA(dim=8, num_heads=2, num_seeds=1)
    >>> tuple(layer(np.random.rand(4, 5, 3)).shape)
    (4, 1, 8)
    """

    def __init__(
        self,
        dim,
        num_heads,
        num_seeds,
        layer_norm=True,
        layer_norm_epsilon=1e-5,
        dropout=0.0,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        seeds_initializer="glorot_uniform",
        **kwargs,
    ):
        super().__init__(
            dim,
            num_heads,
            layer_norm=layer_norm,
            layer_norm_epsilon=layer_norm_epsilon,
            dropout=dropout,
            kernel_initializer=kernel_initializer,
            bias_initializer=bias_initializer,
            kernel_regularizer=kernel_regularizer,
            bias_regularizer=bias_regularizer,
            **kwargs,
        )
        self.num_seeds = check_positive_int("num_seeds", num_seeds)
        self.seeds_initializer = keras.initializers.get(seeds_initializer)

    def build(self, input_shape):
        input_shape = self._fix_features(input_shape)
        self.seeds = self.add_weight(
            name="seeds",
            shape=(self.num_seeds, self.dim),
            initializer=self.seeds_initializer,
        )
        self._feedforward = keras.layers.Dense(
            self.dim,
            activation="relu",
            name="feedforward",
            **self._weight_kwargs(),
        )
        self._feedforward.build(input_shape)
        self._block = MAB(name="mab", **self._block_kwargs())
        self._block.build(
            (input_shape[0], self.num_seeds, self.dim),
            (*input_shape[:-1], self.dim),
        )

    def call(self, inputs, mask=None, training=None):
        values, mask, _ = to_padded(inputs, mask)
        values = ops.cast(values, self.compute_dtype)
        features = self._feedforward(values)  # (batch, set_size, dim)
        seeds = _tile_over_batch(
            self.seeds, values, self.compute_dtype
        )  # (batch, num_seeds, dim)
        return self._block(
            seeds, features, value_mask=mask, training=training
        )  # (batch, num_seeds, dim)

    def compute_output_shape(self, input_shape):
        input_shape = _check_set_shape(input_shape, self, "inputs")
        return (input_shape[0], self.num_seeds, self.dim)

    def compute_mask(self, inputs, mask=None):
        # The set axis is pooled away.
        return None

    def get_config(self):
        return {
            **super().get_config(),
            "num_seeds": self.num_seeds,
            "seeds_initializer": keras.initializers.serialize(
                self.seeds_initializer
            ),
        }
