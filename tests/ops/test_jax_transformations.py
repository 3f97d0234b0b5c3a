"""`keras_laf.laf` under JAX's transformations, composed either way."""

import keras
import numpy as np
import pytest

import keras_laf

pytestmark = [
    pytest.mark.multi_backend,
    pytest.mark.skipif(
        keras.config.backend() != "jax", reason="JAX transformations"
    ),
]


@pytest.mark.parametrize("form", ["padded", "segments"])
def test_grad_of_jit_equals_jit_of_grad_and_the_hand_gradient(form):
    # The power sums have a hand-written gradient; `jax.grad(jax.jit(f))`
    # differentiates a compiled function, which fails when that gradient
    # closes over tensors traced inside the jit.
    import jax

    exponents, coefficients = keras_laf.closed_form("sum")
    exponents, coefficients = exponents[:, None], coefficients[:, None]
    rng = np.random.default_rng(0)
    if form == "padded":
        values = rng.uniform(0.1, 0.9, (2, 5, 3)).astype("float32")
        mask = np.arange(5) < np.array([[3], [5]])
        # d(sum of the set sums)/dx: 1 at real elements, 0 at padding.
        expected = np.broadcast_to(mask[..., None], values.shape)

        def total(values):
            return keras_laf.laf(
                values, exponents, coefficients, mask=mask
            ).sum()

    else:
        values = rng.uniform(0.1, 0.9, (5, 3)).astype("float32")
        segment_ids = np.array([0, 0, 1, 1, 1])
        expected = np.ones(values.shape)

        def total(values):
            return keras_laf.laf(
                values,
                exponents,
                coefficients,
                segment_ids=segment_ids,
                num_segments=2,
            ).sum()

    for gradient in (
        jax.grad(total),
        jax.grad(jax.jit(total)),
        jax.jit(jax.grad(total)),
    ):
        np.testing.assert_allclose(gradient(values), expected, atol=1e-5)


def test_graph_readout_under_jit_counts_graphs_by_nodes_per_graph():
    # Inside `jax.jit` the number of graphs must be a shape: the length of
    # `nodes_per_graph`; a new length traces the function anew.
    import jax

    readout = keras_laf.GraphReadout(["sum", "max"])
    readout_graphs = jax.jit(
        lambda features, ids, counts: readout(
            features, ids, nodes_per_graph=counts
        )
    )
    rng = np.random.default_rng(0)
    for counts in ([2, 3], [1, 1, 3, 0]):
        counts = np.array(counts, "int32")
        ids = np.repeat(np.arange(len(counts), dtype="int32"), counts)
        features = rng.uniform(size=(len(ids), 2)).astype("float32")
        expected = np.zeros((len(counts), 2, 2), "float32")
        for graph in range(len(counts)):
            if counts[graph]:
                members = features[ids == graph]
                expected[graph] = np.stack([members.sum(0), members.max(0)], -1)
        np.testing.assert_allclose(
            np.asarray(readout_graphs(features, ids, counts)),
            expected.reshape(len(counts), 4),
            rtol=1e-6,
        )
    without_counts = jax.jit(lambda features, ids: readout(features, ids))
    with pytest.raises(ValueError, match="pass `nodes_per_graph`"):
        without_counts(features, ids)


@pytest.mark.parametrize("form", ["padded", "segments", "empty set"])
def test_eager_calls_run_one_program_equal_to_the_ops(form):
    # Eager calls run `laf_math` under `jax.jit` (`keras_laf.ops.
    # jax_programs`); traced calls run it op by op in their caller's trace.
    from keras_laf.core.sets import as_set_batch
    from keras_laf.ops.formula import laf_math
    from keras_laf.ops.jax_programs import laf_over_sets

    rng = np.random.default_rng(1)
    exponents = rng.uniform(0, 2, (8, 4)).astype("float32")
    coefficients = rng.uniform(0.1, 1, (4, 4)).astype("float32")
    if form == "segments":
        inputs = rng.uniform(0.05, 0.95, (7, 3)).astype("float32")
        layout = {"segment_ids": np.array([0, 0, 2, 2, 2, 1, 0])}
    else:
        inputs = rng.uniform(0.05, 0.95, (3, 4, 3)).astype("float32")
        sizes = [[4], [0], [2]] if form == "empty set" else [[4], [1], [2]]
        layout = {"mask": np.arange(4) < np.array(sizes)}
    arguments = (exponents, coefficients, 1e-7, 3e38, float("inf"))
    values, sets = as_set_batch(inputs, **layout)
    compiled = keras.ops.convert_to_numpy(
        laf_over_sets(values, sets, *arguments)
    )
    values, sets = as_set_batch(inputs, **layout)
    op_by_op = keras.ops.convert_to_numpy(laf_math(values, sets, *arguments))
    np.testing.assert_allclose(compiled, op_by_op, rtol=1e-6, atol=1e-6)
