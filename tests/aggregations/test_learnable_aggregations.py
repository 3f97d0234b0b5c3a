"""Tests of the learnable aggregations: softmax, power mean, attentional,
GRU, Set2Set, Graph Multiset Transformer and MultiAggregation.

Each is compared with an independent NumPy reference (or, for the Graph
Multiset Transformer, with its blocks applied to each set alone) on padded
sets with a mask and on unsorted segment ids; padding holds NaN, so any
leak of it shows.
"""

import keras
import numpy as np
import pytest
from keras import ops

import keras_laf
from keras_laf import AttentionalAggregation
from keras_laf import GraphMultisetTransformer
from keras_laf import GRUAggregation
from keras_laf import LSTMAggregation
from keras_laf import MultiAggregation
from keras_laf import PowerMeanAggregation
from keras_laf import Set2Set
from keras_laf import SoftmaxAggregation
from keras_laf import aggregations

pytestmark = pytest.mark.multi_backend

TENSORFLOW_ONLY = pytest.mark.tensorflow_only(
    "ragged tensors exist only in TensorFlow"
)

FEATURES = 2
# Three sets of 4, 1 and 2 elements; the power mean's clipping into
# [0, 100] meets the negative and the too large values.
SETS = [
    np.array([[0.1, 2.0], [0.5, -1.5], [0.9, 120.0], [0.3, 2.0]], "float32"),
    np.array([[1.0, -1.0]], "float32"),
    np.array([[0.2, 0.0], [0.7, 3.0]], "float32"),
]


def padded(sets, set_size=5):
    """Padded sets whose padding holds NaN, and their mask."""
    values = np.full((len(sets), set_size, FEATURES), np.nan, "float32")
    mask = np.zeros((len(sets), set_size), bool)
    for index, elements in enumerate(sets):
        values[index, : len(elements)] = elements
        mask[index, : len(elements)] = True
    return values, mask


def segments(sets, seed=0):
    """Flat values in a shuffled order and their segment ids."""
    values = np.concatenate([s for s in sets if len(s)]).astype("float32")
    ids = np.repeat(np.arange(len(sets)), [len(s) for s in sets])
    order = np.random.default_rng(seed).permutation(len(ids))
    return values[order], ids[order].astype("int32")


def numpy(tensor):
    return ops.convert_to_numpy(tensor)


def padded_and_segment_outputs(layer, sets=SETS):
    values, mask = padded(sets)
    flat, ids = segments(sets)
    return (
        numpy(layer(values, mask=mask)),
        numpy(layer(flat, segment_ids=ids, num_segments=len(sets))),
    )


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


# NumPy references, one set `x` `(n, features)` at a time.


def softmax_reference(x, t):
    if not len(x):
        return np.zeros(x.shape[1])
    scores = t * x.astype("float64")
    weights = np.exp(scores - scores.max(0))
    weights /= weights.sum(0)
    return (weights * x).sum(0)


def power_mean_reference(x, p):
    if not len(x):
        return np.zeros(x.shape[1])
    clipped = np.clip(x.astype("float64"), 0, 100)
    return np.mean(clipped**p, 0) ** (1 / p)


def dense_reference(x, dense):
    kernel, bias = (numpy(w) for w in dense.weights)
    return x @ kernel + bias


def attention_reference(x, layer):
    scores = dense_reference(x, layer.gate)
    weights = np.exp(scores - scores.max(0))
    weights /= weights.sum(0)
    return (weights * dense_reference(x, layer.transform)).sum(0)


def lstm_cell_reference(inputs, h, c, cell):
    kernel, recurrent_kernel, bias = (numpy(w) for w in cell.weights)
    z = inputs @ kernel + h @ recurrent_kernel + bias
    i, f, g, o = np.split(z, 4, axis=-1)
    c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    return sigmoid(o) * np.tanh(c), c


def set2set_reference(x, layer):
    features = x.shape[1]
    h = c = np.zeros(features)
    query_star = np.zeros(2 * features)
    for _ in range(layer.processing_steps):
        h, c = lstm_cell_reference(query_star, h, c, layer.lstm)
        scores = x @ h
        weights = np.exp(scores - scores.max()) if len(x) else scores
        weights = weights / weights.sum() if len(x) else weights
        readout = (weights[:, None] * x).sum(0)
        query_star = np.concatenate([h, readout])
    return query_star


def gru_reference(x, layer):
    # Keras's GRU with reset_after=True: biases of the input and of the
    # recurrent state apart, the reset gate applied after the product.
    kernel, recurrent_kernel, bias = (numpy(w) for w in layer.gru.weights)
    h = np.zeros(layer.units)
    for element in x:
        inputs = element @ kernel + bias[0]
        inner = h @ recurrent_kernel + bias[1]
        x_z, x_r, x_h = np.split(inputs, 3)
        h_z, h_r, h_h = np.split(inner, 3)
        z, r = sigmoid(x_z + h_z), sigmoid(x_r + h_r)
        h = z * h + (1 - z) * np.tanh(x_h + r * h_h)
    return h


def references(reference, sets=SETS):
    return np.stack([reference(x) for x in sets])


@pytest.mark.parametrize("t", [1.0, 2.0])
def test_softmax_matches_numpy_on_padded_sets_and_segments(t):
    layer = SoftmaxAggregation(t=t)
    expected = references(lambda x: softmax_reference(x, t))
    for outputs in padded_and_segment_outputs(layer):
        np.testing.assert_allclose(outputs, expected, rtol=1e-5, atol=1e-5)


def test_softmax_with_a_learned_temperature_per_feature():
    layer = SoftmaxAggregation(t=0.5, learn=True, channels=FEATURES)
    values, mask = padded(SETS)
    layer(values, mask=mask)
    layer.temperature.assign(np.array([2.0, -3.0], "float32"))
    expected = references(lambda x: softmax_reference(x, np.array([2.0, -3.0])))
    for outputs in padded_and_segment_outputs(layer):
        np.testing.assert_allclose(outputs, expected, rtol=1e-5, atol=1e-5)


def test_softmax_stays_finite_for_large_scores():
    layer = SoftmaxAggregation(t=100.0)
    values = np.array([[[50.0], [49.0], [-50.0]]], "float32")
    outputs = numpy(layer(values))
    np.testing.assert_allclose(
        outputs, [[softmax_reference(values[0], 100.0)[0]]], rtol=1e-6
    )


@pytest.mark.parametrize("p", [1.0, 3.0])
def test_power_mean_matches_numpy_on_padded_sets_and_segments(p):
    layer = PowerMeanAggregation(p=p)
    expected = references(lambda x: power_mean_reference(x, p))
    for outputs in padded_and_segment_outputs(layer):
        np.testing.assert_allclose(outputs, expected, rtol=1e-5, atol=1e-5)


def test_power_mean_is_finite_for_large_powers():
    layer = PowerMeanAggregation(p=200.0)
    values = np.array([[[100.0], [50.0]], [[0.0], [0.0]]], "float32")
    outputs = numpy(layer(values))
    # (x^200 / 2)^(1/200) = 100 / 2^(1/200); the zeros give epsilon.
    np.testing.assert_allclose(
        outputs, [[100 / 2 ** (1 / 200)], [1e-7]], rtol=1e-5
    )


def test_attentional_aggregation_matches_numpy():
    layer = AttentionalAggregation(
        gate=keras.layers.Dense(1), transform=keras.layers.Dense(3)
    )
    padded_outputs, segment_outputs = padded_and_segment_outputs(layer)
    expected = references(lambda x: attention_reference(x, layer))
    np.testing.assert_allclose(padded_outputs, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(segment_outputs, expected, rtol=1e-5, atol=1e-5)


def test_attentional_aggregation_with_a_gate_per_feature():
    layer = AttentionalAggregation(gate=keras.layers.Dense(FEATURES))
    values, mask = padded(SETS)
    outputs = numpy(layer(values, mask=mask))

    def reference(x):
        scores = dense_reference(x, layer.gate)
        weights = np.exp(scores - scores.max(0))
        return (weights / weights.sum(0) * x).sum(0)

    np.testing.assert_allclose(
        outputs, references(reference), rtol=1e-5, atol=1e-5
    )
    with pytest.raises(ValueError, match="1 score per element"):
        AttentionalAggregation(gate=keras.layers.Dense(3))(values)


def test_set2set_matches_numpy():
    layer = Set2Set(processing_steps=3)
    padded_outputs, segment_outputs = padded_and_segment_outputs(layer)
    expected = references(lambda x: set2set_reference(x, layer))
    assert padded_outputs.shape == (3, 2 * FEATURES)
    np.testing.assert_allclose(padded_outputs, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(segment_outputs, expected, rtol=1e-5, atol=1e-5)


def test_gru_aggregation_matches_numpy_on_padded_sets():
    layer = GRUAggregation(units=3)
    values, mask = padded(SETS)
    outputs = numpy(layer(values, mask=mask))
    expected = references(lambda x: gru_reference(x, layer))
    np.testing.assert_allclose(outputs, expected, rtol=1e-5, atol=1e-5)


def test_recurrent_aggregations_read_segments_in_order_of_appearance():
    layer = GRUAggregation(units=3)
    values, mask = padded(SETS)
    expected = numpy(layer(values, mask=mask))
    # Sorted ids: the order of appearance is the order of each set.
    flat = np.concatenate(SETS)
    ids = np.repeat(np.arange(3), [len(s) for s in SETS]).astype("int32")
    np.testing.assert_allclose(
        numpy(layer(flat, segment_ids=ids)), expected, rtol=1e-5, atol=1e-6
    )


def test_graph_multiset_transformer_is_its_blocks_on_each_set_alone():
    layer = GraphMultisetTransformer(
        dim=4, num_heads=2, num_seeds=3, num_encoder_blocks=2
    )
    values, mask = padded(SETS)
    outputs = numpy(layer(values, mask=mask))
    assert outputs.shape == (3, 4)
    for index, elements in enumerate(SETS):
        seeds = layer.seed_pooling(elements[None])
        for encoder in layer.encoders:
            seeds = encoder(seeds)
        expected = numpy(layer.pooling(seeds))[0, 0]
        np.testing.assert_allclose(
            outputs[index], expected, rtol=1e-5, atol=1e-5
        )


def test_multi_aggregation_concatenates_laf_and_max():
    layer = MultiAggregation(["laf", "max"])
    values, mask = padded(SETS)
    outputs = numpy(layer(values, mask=mask))
    laf = layer.members[0]
    assert isinstance(laf, keras_laf.LAF)
    assert outputs.shape == (3, FEATURES * (laf.units + 1))
    for index, elements in enumerate(SETS):
        expected = np.concatenate(
            [numpy(laf(sigmoid(elements)[None]))[0], elements.max(0)]
        )
        np.testing.assert_allclose(
            outputs[index], expected, rtol=1e-5, atol=1e-5
        )
    flat, ids = segments(SETS)
    np.testing.assert_allclose(
        numpy(layer(flat, segment_ids=ids)), outputs, rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize(
    "mode, combine",
    [
        ("sum", lambda a, b: a + b),
        ("mean", lambda a, b: (a + b) / 2),
        ("max", np.maximum),
        ("min", np.minimum),
    ],
)
def test_multi_aggregation_combines_elementwise(mode, combine):
    layer = MultiAggregation(["mean", "max"], mode=mode)
    values, mask = padded(SETS)
    expected = np.stack([combine(s.mean(0), s.max(0)) for s in SETS])
    np.testing.assert_allclose(
        numpy(layer(values, mask=mask)), expected, rtol=1e-5, atol=1e-5
    )


def test_multi_aggregation_projects():
    layer = MultiAggregation(
        ["sum", SoftmaxAggregation(t=2.0)], mode="proj", units=3
    )
    values, mask = padded(SETS)
    outputs = numpy(layer(values, mask=mask))
    concatenated = np.stack(
        [np.concatenate([s.sum(0), softmax_reference(s, 2.0)]) for s in SETS]
    )
    np.testing.assert_allclose(
        outputs,
        dense_reference(concatenated, layer.projection),
        rtol=1e-5,
        atol=1e-5,
    )


def all_layers():
    """A fresh layer of each kind, with few units."""
    return {
        "softmax": SoftmaxAggregation(t=2.0, learn=True, channels=FEATURES),
        "powermean": PowerMeanAggregation(p=3.0, learn=True),
        "attention": AttentionalAggregation(
            keras.layers.Dense(1), keras.layers.Dense(3)
        ),
        "gru": GRUAggregation(units=3),
        "lstm": LSTMAggregation(units=3),
        "set2set": Set2Set(processing_steps=2),
        "gmt": GraphMultisetTransformer(dim=4, num_heads=2, num_seeds=2),
        "multi": MultiAggregation(["laf", "max", "powermean"]),
    }


LAYER_NAMES = list(all_layers())


@pytest.mark.parametrize("name", LAYER_NAMES)
def test_padded_sets_with_a_mask_give_each_set_alone(name):
    layer = all_layers()[name]
    values, mask = padded(SETS)
    outputs = numpy(layer(values, mask=mask))
    assert np.all(np.isfinite(outputs))
    for index, elements in enumerate(SETS):
        alone = numpy(layer(elements[None]))[0]
        np.testing.assert_allclose(outputs[index], alone, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", LAYER_NAMES)
def test_empty_sets(name):
    layer = all_layers()[name]
    sets = [SETS[0], np.zeros((0, FEATURES), "float32")]
    values, mask = padded(sets)
    outputs = numpy(layer(values, mask=mask))
    assert np.all(np.isfinite(outputs))
    if name in ("softmax", "powermean", "attention"):
        np.testing.assert_array_equal(outputs[1], 0)
    if name in ("gru", "lstm"):
        # They read shuffled segments in their shuffled order.
        return
    flat, ids = segments(sets)
    np.testing.assert_allclose(
        numpy(layer(flat, segment_ids=ids, num_segments=2)),
        outputs,
        rtol=1e-5,
        atol=1e-5,
    )


@pytest.mark.parametrize("name", ["softmax", "powermean", "attention"])
def test_nan_in_a_set_shows_in_its_aggregate_only(name):
    layer = all_layers()[name]
    sets = [SETS[0].copy(), SETS[2]]
    sets[0][1, 0] = np.nan
    values, mask = padded(sets)
    outputs = numpy(layer(values, mask=mask))
    assert np.isnan(outputs[0]).any()
    assert np.all(np.isfinite(outputs[1]))


@TENSORFLOW_ONLY
@pytest.mark.parametrize("name", LAYER_NAMES)
def test_ragged_sets_give_the_padded_outputs(name):
    import tensorflow as tf

    layer = all_layers()[name]
    values, mask = padded(SETS)
    ragged = tf.RaggedTensor.from_row_lengths(
        np.concatenate(SETS), [len(s) for s in SETS]
    )
    np.testing.assert_allclose(
        numpy(layer(ragged)),
        numpy(layer(values, mask=mask)),
        rtol=1e-5,
        atol=1e-5,
    )


@pytest.mark.parametrize("name", LAYER_NAMES)
def test_keras_file_round_trip(name, tmp_path):
    layer = all_layers()[name]
    values, mask = padded(SETS)
    inputs = keras.Input((None, FEATURES))
    input_mask = keras.Input((None,), dtype="bool")
    model = keras.Model([inputs, input_mask], layer(inputs, mask=input_mask))
    expected = numpy(model([values, mask]))
    model.save(tmp_path / "model.keras")
    reloaded = keras.models.load_model(tmp_path / "model.keras")
    np.testing.assert_allclose(
        numpy(reloaded([values, mask])), expected, rtol=1e-6, atol=1e-6
    )


def gradients(function, *arrays):
    """Gradients of `sum(function(*tensors))` with respect to each array."""
    backend = keras.config.backend()
    tensors = [ops.convert_to_tensor(a) for a in arrays]
    if backend == "tensorflow":
        import tensorflow as tf

        with tf.GradientTape() as tape:
            tape.watch(tensors)
            total = ops.sum(function(*tensors))
        return [numpy(g) for g in tape.gradient(total, tensors)]
    if backend == "jax":
        import jax

        grads = jax.grad(
            lambda *t: ops.sum(function(*t)), argnums=tuple(range(len(arrays)))
        )(*tensors)
        return [numpy(g) for g in grads]
    import torch

    tensors = [t.detach().requires_grad_(True) for t in tensors]
    total = ops.sum(function(*tensors))
    return [numpy(g) for g in torch.autograd.grad(total, tensors)]


@pytest.mark.parametrize(
    "layer, values",
    [
        # Zeros (the logarithm's floor), x clipped at 0 and 100, a large p.
        (
            PowerMeanAggregation(p=50.0),
            [[[0.0], [0.0]], [[100.0], [150.0]], [[-1.0], [3.0]]],
        ),
        (PowerMeanAggregation(p=0.01), [[[0.0], [1e-3]], [[1.0], [2.0]]]),
        # Scores t x far beyond exp's range.
        (SoftmaxAggregation(t=100.0), [[[50.0], [-50.0]], [[1e3], [1e3]]]),
        (SoftmaxAggregation(t=-100.0), [[[50.0], [-50.0]], [[0.0], [0.0]]]),
    ],
)
def test_gradients_are_finite_at_the_edges(layer, values):
    values = np.array(values, "float32")
    # The second set of each batch padded to empty, too.
    mask = np.ones(values.shape[:2], bool)
    mask[-1] = False
    for kwargs in ({}, {"mask": mask}):
        (grads,) = gradients(lambda v, kw=kwargs: layer(v, **kw), values)
        assert np.all(np.isfinite(grads))
    if kwargs:
        np.testing.assert_array_equal(grads[-1], 0)


@pytest.mark.parametrize(
    "layer",
    [
        SoftmaxAggregation(t=1.0, learn=True, channels=FEATURES),
        PowerMeanAggregation(p=2.0, learn=True, channels=FEATURES),
    ],
    ids=["softmax", "powermean"],
)
def test_learned_parameters_stay_finite_through_fit(layer):
    rng = np.random.default_rng(0)
    values = rng.uniform(0, 3, (32, 5, FEATURES)).astype("float32")
    values[:, :, 0] = 0.0  # at the power mean's floor
    mask = rng.uniform(size=(32, 5)) < 0.7
    mask[:4] = False  # empty sets
    targets = values.max(1)
    inputs = keras.Input((5, FEATURES))
    input_mask = keras.Input((5,), dtype="bool")
    model = keras.Model([inputs, input_mask], layer(inputs, mask=input_mask))
    before = [numpy(w) for w in layer.trainable_weights]
    assert len(before) == 1 and before[0].shape == (FEATURES,)
    model.compile(optimizer=keras.optimizers.Adam(0.1), loss="mse")
    history = model.fit([values, mask], targets, epochs=5, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    after = numpy(layer.trainable_weights[0])
    assert np.all(np.isfinite(after))
    assert not np.array_equal(after, before[0])


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="channels=2, learn=False"):
        SoftmaxAggregation(channels=2)
    with pytest.raises(ValueError, match="Received: p=0"):
        PowerMeanAggregation(p=0)
    with pytest.raises(ValueError, match="Received: t=nan"):
        SoftmaxAggregation(t=float("nan"))
    with pytest.raises(ValueError, match="channels=3"):
        SoftmaxAggregation(learn=True, channels=3)(np.ones((1, 2, 2)))
    with pytest.raises(ValueError, match="processing_steps=0"):
        Set2Set(processing_steps=0)
    with pytest.raises(ValueError, match="Received: gate='dense'"):
        AttentionalAggregation(gate="dense")
    with pytest.raises(ValueError, match="mode='concat'"):
        MultiAggregation(["sum"], mode="concat")
    with pytest.raises(ValueError, match="units=None"):
        MultiAggregation(["sum"], mode="proj")
    with pytest.raises(ValueError, match="non-empty list"):
        MultiAggregation("sum")
    with pytest.raises(ValueError, match="one width"):
        MultiAggregation(["laf", "max"], mode="sum")(np.ones((1, 2, 2)))
    with pytest.raises(ValueError, match="divisible"):
        GraphMultisetTransformer(dim=5, num_heads=2)
    # Weights sized by the features fix them.
    for layer in (Set2Set(), AttentionalAggregation(), GRUAggregation(2)):
        layer(np.ones((1, 2, 2), "float32"))
        with pytest.raises(ValueError, match=f"{layer.name}.*value 2"):
            layer(np.ones((1, 2, 3), "float32"))


@pytest.mark.parametrize(
    "name, cls",
    [
        ("softmax", SoftmaxAggregation),
        ("powermean", PowerMeanAggregation),
        ("attention", AttentionalAggregation),
        ("gru", GRUAggregation),
        ("set2set", Set2Set),
        ("gmt", GraphMultisetTransformer),
    ],
)
def test_registry_knows_each_layer_by_name(name, cls):
    layer = aggregations.get(name, name="pooling")
    assert type(layer) is cls and layer.name == "pooling"
    assert name in aggregations.names()


def test_registry_lists_mixing_laf_in():
    laf_arguments = {"units": 4, "preset": "closed_forms"}
    layer = aggregations.get(
        ["laf", "max"], aggregations_kwargs=[laf_arguments, {}]
    )
    assert isinstance(layer, MultiAggregation)
    assert layer.members[0].units == 4
    assert layer.members[0].preset == "closed_forms"
    assert (
        aggregations.num_aggregates(
            ["laf", "max"], aggregations_kwargs=[laf_arguments, {}]
        )
        == 5
    )
    assert aggregations.num_aggregates("softmax") == 1
    # Lists of fixed aggregators stay one FixedAggregation.
    assert type(aggregations.get(["sum", "max"])) is keras_laf.FixedAggregation
    assert layer.input_domain == "real"
    # A member that mixes the features has no per-feature count.
    assert aggregations.num_aggregates(["laf", "gru"]) is None


def small_graph():
    # Node 0 receives 3 edges, node 1 one, node 2 none.
    features = np.random.default_rng(1).uniform(size=(3, 2)).astype("float32")
    source = np.array([1, 2, 2, 0], "int32")
    target = np.array([0, 0, 0, 1], "int32")
    return features, source, target


def test_linear_degree_scalers():
    features, source, target = small_graph()
    layer = keras_laf.MessagePassing(
        2,
        aggregation="sum",
        scalers=["identity", "linear", "inverse_linear"],
        average_degree=2.0,
    )
    layer(features, source, target)
    scaled = numpy(layer.aggregate_neighbours(features, source, target))
    identity, linear, inverse_linear = np.split(scaled, 3, axis=-1)
    degrees = np.array([[3.0], [1.0], [1.0]])  # at least 1
    np.testing.assert_allclose(linear, identity * degrees / 2.0, rtol=1e-6)
    np.testing.assert_allclose(
        inverse_linear, identity * 2.0 / degrees, rtol=1e-6
    )
    # By default the average degree is the one whose log(d + 1) is delta.
    default = keras_laf.MessagePassing(2, aggregation="sum", scalers="linear")
    default(features, source, target)
    assert default.get_config()["average_degree"] is None


def test_trainable_average_log_degree():
    features, source, target = small_graph()
    layer = keras_laf.MessagePassing(
        2,
        aggregation="mean",
        scalers=["identity", "amplification", "attenuation"],
        average_log_degree=1.2,
        train_average_log_degree=True,
    )
    layer(features, source, target)
    assert "log_average_log_degree" in [w.name for w in layer.trainable_weights]
    layer.log_average_log_degree.assign(np.log(0.8))
    scaled = numpy(layer.aggregate_neighbours(features, source, target))
    identity, amplification, attenuation = np.split(scaled, 3, axis=-1)
    log_degrees = np.log(np.array([[3.0], [1.0], [1.0]]) + 1)
    np.testing.assert_allclose(
        amplification, identity * log_degrees / 0.8, rtol=1e-5
    )
    np.testing.assert_allclose(
        attenuation, identity * 0.8 / log_degrees, rtol=1e-5
    )
    config = layer.get_config()
    assert config["train_average_log_degree"] is True
    with pytest.raises(ValueError, match="average_degree=0"):
        keras_laf.MessagePassing(2, average_degree=0)


@pytest.mark.parametrize(
    "aggregation", ["softmax", "set2set", "attention", ["laf", "max"]]
)
def test_graph_readout_takes_every_aggregation(aggregation):
    features, _, _ = small_graph()
    graph_ids = np.array([0, 1, 1], "int32")
    readout = keras_laf.GraphReadout(
        aggregation,
        aggregation_kwargs={"units": 2} if aggregation == "laf" else {},
    )
    outputs = numpy(readout(features, graph_ids))
    expected_shape = readout.compute_output_shape(features.shape)
    assert outputs.shape == (2, expected_shape[-1])
    alone = numpy(readout.aggregation_layer()(features[1:][None]))
    np.testing.assert_allclose(outputs[1], alone[0], rtol=1e-5, atol=1e-6)


def test_hypermodel_chooses_among_the_new_aggregations():
    import keras_tuner

    from keras_laf.models import DeepSetsHyperModel

    hypermodel = DeepSetsHyperModel(
        input_dim=FEATURES, aggregations=("laf", "softmax", "gru", "gmt")
    )
    for name in ("softmax", "gru", "gmt"):
        hp = keras_tuner.HyperParameters()
        hp.Fixed("aggregation", name)
        model = hypermodel.build(hp)
        assert model.get_layer("aggregation").__class__ is type(
            aggregations.get(name)
        )


@pytest.mark.parametrize("command", ["pointcloud", "scalars"])
def test_commands_take_the_new_methods(command):
    import argparse
    import importlib

    module = importlib.import_module(f"laf_experiments.commands.{command}")
    parser = argparse.ArgumentParser()
    module.add_arguments(parser)
    args = parser.parse_args(["--methods", "laf+max,softmax,gmt"])
    assert list(args.methods) == ["laf+max", "softmax", "gmt"]
