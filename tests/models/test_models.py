"""Tests of the model builders on ragged and padded sets."""

import os
import subprocess
import sys
import textwrap
import warnings

import keras
import numpy as np
import pytest
import tensorflow as tf

import keras_laf
from keras_laf import datasets
from keras_laf import models

# (builder, small arguments, elements are integers)
CONFIGS = {
    **{
        f"deep_sets_{aggregation}": (
            models.deep_sets,
            {"input_dim": 3, "phi_units": (4,), "aggregation": aggregation},
            False,
        )
        for aggregation in (
            "laf",
            "sum",
            "mean",
            "max",
            "deepsets",
            "pna",
            "lstm",
        )
    },
    "deep_sets_integers": (
        models.deep_sets,
        {"vocabulary_size": 10, "embedding_dim": 4, "phi_units": ()},
        True,
    ),
    "set_transformer_pma": (
        models.set_transformer,
        {
            "input_dim": 3,
            "hidden_units": 8,
            "num_heads": 2,
            "aggregation": "pma",
        },
        False,
    ),
    "set_transformer_isab_laf": (
        models.set_transformer,
        {
            "input_dim": 3,
            "hidden_units": 8,
            "num_heads": 2,
            "encoder": "isab",
            "num_inducing": 3,
            "aggregation": "laf",
            "aggregation_kwargs": {"units": 2},
        },
        False,
    ),
    **{
        f"point_cloud_{pooling}": (
            models.point_cloud_classifier,
            {
                "num_classes": 4,
                "aggregation": pooling,
                "aggregation_kwargs": {"units": 2}
                if pooling == "laf"
                else None,
                "hidden_units": 8,
            },
            False,
        )
        for pooling in ("max", "sum", "pna", "pna_neighbourhood", "lstm", "laf")
    },
}


def make_sets(integers, seed=0, num_sets=6):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 6, num_sets)
    if integers:
        values = rng.integers(0, 10, sizes.sum()).astype("int32")
    else:
        values = rng.normal(size=(sizes.sum(), 3)).astype("float32")
    return tf.RaggedTensor.from_row_lengths(values, sizes)


def build_pair(config):
    builder, kwargs, integers = CONFIGS[config]
    ragged_model = builder(**kwargs, ragged=True)
    padded_model = builder(**kwargs)
    padded_model.set_weights(ragged_model.get_weights())
    return ragged_model, padded_model, integers


def as_padded(sets):
    values = sets.to_tensor()
    mask = tf.sequence_mask(sets.row_lengths(), tf.shape(values)[1])
    return [values, tf.cast(mask, "float32")]


@pytest.mark.parametrize("config", sorted(CONFIGS))
@pytest.mark.slow
def test_ragged_and_padded_agree_and_fit(config):
    ragged_model, padded_model, integers = build_pair(config)
    # Every layer is named by the builder: a layer left to Keras's automatic
    # naming would be called `dense_1` and so on in the second model.
    builder, kwargs, _ = CONFIGS[config]
    again = builder(**kwargs, ragged=True)
    assert [layer.name for layer in again.layers] == [
        layer.name for layer in ragged_model.layers
    ]
    sets = make_sets(integers)
    np.testing.assert_allclose(
        padded_model(as_padded(sets)).numpy(),
        ragged_model(sets).numpy(),
        rtol=1e-4,
        atol=1e-5,
    )
    num_outputs = ragged_model.output_shape[-1]
    labels = np.random.default_rng(1).uniform(size=(6, num_outputs))
    dataset = tf.data.Dataset.from_tensor_slices(
        (sets, labels.astype("float32"))
    ).ragged_batch(3)
    for model, data in (
        (ragged_model, dataset),
        (padded_model, datasets.to_padded_batches(dataset)),
    ):
        model.compile(optimizer="adam", loss="mae")
        history = model.fit(data, epochs=1, verbose=0)
        assert np.isfinite(history.history["loss"]).all()


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_permutation_invariance(config):
    builder, kwargs, integers = CONFIGS[config]
    model = builder(**kwargs, ragged=True)
    sets = make_sets(integers, seed=2)
    rng = np.random.default_rng(3)
    starts = sets.row_starts().numpy()
    order = np.concatenate(
        [start + rng.permutation(len(row)) for start, row in zip(starts, sets)]
    )
    shuffled = tf.RaggedTensor.from_row_lengths(
        tf.gather(sets.flat_values, order), sets.row_lengths()
    )
    same = np.allclose(
        model(shuffled).numpy(), model(sets).numpy(), rtol=1e-4, atol=1e-5
    )
    # The LSTM aggregation reads the set in order, by design.
    reads_in_order = "lstm" in (
        kwargs.get("aggregation"),
        kwargs.get("pooling"),
    )
    assert same != reads_in_order


@pytest.mark.parametrize(
    "config",
    ["deep_sets_laf", "deep_sets_integers", "set_transformer_isab_laf"]
    + ["point_cloud_laf", "deep_sets_lstm", "deep_sets_pna"],
)
def test_save_and_reload(tmp_path, config):
    builder, kwargs, integers = CONFIGS[config]
    for ragged in (True, False):
        model = builder(**kwargs, ragged=ragged)
        sets = make_sets(integers)
        inputs = sets if ragged else as_padded(sets)
        path = os.path.join(tmp_path, f"{config}_{ragged}.keras")
        model.save(path)
        reloaded = keras.models.load_model(path)
        np.testing.assert_array_equal(
            reloaded(inputs).numpy(), model(inputs).numpy()
        )


def test_paper_configurations():
    integer_model = models.deep_sets(
        vocabulary_size=10,
        embedding_dim=10,
        phi_units=(),
        aggregation_kwargs={"units": 9},
    )
    assert [layer.name for layer in integer_model.layers] == [
        "sets",
        "embedding",
        "phi_activation",
        "mask",
        "aggregation",
        "output",
    ]
    assert integer_model.count_params() == 100 + 12 * 9 + 91
    mnist_model = models.deep_sets(
        input_dim=784, phi_units=(300, 100, 30), rho_units=(1000, 100)
    )
    widths = [
        layer.layer.units
        for layer in mnist_model.layers
        if layer.name.startswith("phi_")
    ]
    assert widths == [300, 100, 30]
    assert mnist_model.get_layer("aggregation").output.shape == (None, 270)
    for head, kwargs in (("pma", None), ("laf", {"units": 10})):
        model = models.set_transformer(
            input_dim=784,
            phi_units=(300, 100, 30),
            aggregation=head,
            aggregation_kwargs=kwargs,
        )
        assert model.output_shape == (None, 1)


@pytest.mark.parametrize(
    "builder, kwargs, layer_name",
    [
        (models.deep_sets, {"input_dim": 3}, "aggregation"),
        (
            models.set_transformer,
            {
                "input_dim": 3,
                "hidden_units": 8,
                "num_heads": 2,
                "aggregation": "laf",
            },
            "laf",
        ),
        (
            models.point_cloud_classifier,
            {"num_classes": 4, "aggregation": "laf", "hidden_units": 8},
            "laf",
        ),
        (models.set_expansion, {"vocabulary_size": 10}, "aggregation"),
    ],
)
def test_aggregation_kwargs_reach_the_layer(builder, kwargs, layer_name):
    def laf_layer(model):
        if layer_name == "aggregation" and builder is models.set_expansion:
            model = model.get_layer("set_encoder")
        return model.get_layer(layer_name)

    assert laf_layer(builder(**kwargs)).preset == "pooling"
    preset = {"preset": "closed_forms"}
    model = builder(**kwargs, aggregation_kwargs=preset)
    assert laf_layer(model).preset == "closed_forms"
    with pytest.raises(ValueError, match="preset='median'"):
        builder(**kwargs, aggregation_kwargs={"preset": "median"})


def test_point_cloud_pooling_may_be_a_layer():
    # A LAF with other arguments is used as given, after the map of the
    # tanh features into [0, 1].
    pooling = keras_laf.LAF(3, name="my_laf")
    model = models.point_cloud_classifier(
        num_classes=4, aggregation=pooling, hidden_units=8, ragged=False
    )
    assert model.get_layer("my_laf") is pooling
    assert model.output_shape == (None, 4)
    # (1 + tanh) / 2: the last equivariant layer's -1, 0 and 1 become 0,
    # 0.5 and 1, the whole of LAF's domain.
    to_unit_interval = model.get_layer("to_unit_interval")
    features = np.array([[[-1.0, 0.0, 1.0] + [0.0] * 5]], "float32")
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(to_unit_interval(features))[0, 0, :3],
        [0.0, 0.5, 1.0],
    )


def test_point_cloud_laf_in_a_list_pools_the_mapped_features_once():
    # ["laf", "max"]: LAF and max both pool (1 + tanh) / 2 of the last
    # equivariant layer, with no sigmoid after the map.
    model = models.point_cloud_classifier(
        num_classes=3, aggregation=["laf", "max"], hidden_units=8, dropout=0.0
    )
    clouds = np.random.default_rng(0).normal(size=(2, 5, 3))
    inputs = [clouds.astype("float32"), np.ones((2, 5), "float32")]
    features = keras.Model(
        model.inputs,
        [
            model.get_layer("equivariant_2").output,
            model.get_layer("pooling").output,
        ],
    )
    tanh_features, pooled = (
        keras.ops.convert_to_numpy(value) for value in features(inputs)
    )
    mapped = (1.0 + tanh_features) / 2.0
    laf = model.get_layer("pooling").members[0]
    expected_laf = keras.ops.convert_to_numpy(laf(mapped))
    width = expected_laf.shape[-1]
    np.testing.assert_allclose(pooled[:, :width], expected_laf, rtol=1e-5)
    np.testing.assert_allclose(pooled[:, width:], mapped.max(axis=1), rtol=1e-6)


@pytest.mark.multi_backend
def test_deep_sets_laf_in_a_list_pools_phi_squashed_once():
    # ["laf", "max"]: phi ends in a sigmoid, so LAF pools phi's output as
    # it is, with no second sigmoid, like the max beside it.
    model = models.deep_sets(
        input_dim=3,
        aggregation=["laf", "max"],
        aggregation_kwargs={"aggregations_kwargs": [{"units": 2}, {}]},
        phi_units=(4,),
    )
    rng = np.random.default_rng(0)
    sets = rng.normal(size=(2, 5, 3)).astype("float32")
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], "float32")
    pooled = keras.Model(model.inputs, model.get_layer("aggregation").output)
    pooled = keras.ops.convert_to_numpy(pooled([sets, mask]))
    # phi, one Dense layer with a sigmoid, in NumPy.
    kernel, bias = model.get_layer("phi_0").get_weights()
    phi = 1.0 / (1.0 + np.exp(-(sets @ kernel + bias)))
    laf = model.get_layer("aggregation").members[0]
    expected_laf = keras.ops.convert_to_numpy(laf(phi, mask=mask > 0))
    width = expected_laf.shape[-1]
    np.testing.assert_allclose(pooled[:, :width], expected_laf, rtol=1e-5)
    expected_max = np.where(mask[..., None] > 0, phi, -np.inf).max(axis=1)
    np.testing.assert_allclose(pooled[:, width:], expected_max, rtol=1e-6)


@pytest.mark.parametrize(
    "builder, kwargs, message",
    [
        (
            models.deep_sets,
            {"input_dim": 3, "aggregation": "medians"},
            "medians",
        ),
        (
            models.deep_sets,
            {"input_dim": 3, "aggregation_kwargs": {"units": 0}},
            "units=0",
        ),
        (models.deep_sets, {}, "exactly one"),
        (models.deep_sets, {"input_dim": 3, "phi_units": 5}, "phi_units=5"),
        (
            models.set_transformer,
            {"input_dim": 3, "hidden_units": 10},
            "divide",
        ),
        (
            models.set_transformer,
            {"input_dim": 3, "aggregation": "medians"},
            "medians",
        ),
        (models.point_cloud_classifier, {"aggregation": "medians"}, "medians"),
        (models.point_cloud_classifier, {"dropout": 1.0}, "dropout=1.0"),
    ],
)
def test_bad_arguments(builder, kwargs, message):
    with pytest.raises(ValueError, match=message):
        builder(**kwargs)


MIRRORED_SCRIPT = textwrap.dedent(
    """
    import numpy as np
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(
        cpu, [tf.config.LogicalDeviceConfiguration()] * 2
    )
    from keras_laf import datasets, models
    from laf_experiments.data import make_training_sets

    data = make_training_sets(64, "max", seed=0)
    ragged = data.to_dataset(batch_size=16)
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    assert strategy.num_replicas_in_sync == 2
    with strategy.scope():
        model = models.deep_sets(
            vocabulary_size=10,
            phi_units=(),
            aggregation_kwargs={"units": 3},
            ragged=False,
        )
        model.compile(optimizer="adam", loss="mae")
    history = model.fit(
        datasets.to_padded_batches(ragged, set_size=10), epochs=2, verbose=0
    )
    assert np.isfinite(history.history["loss"]).all()
    print("distributed ok")
    """
)


@pytest.mark.slow
def test_mirrored_strategy_on_two_logical_cpus():
    completed = subprocess.run(
        [sys.executable, "-c", MIRRORED_SCRIPT],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "distributed ok" in completed.stdout, completed.stderr[-3000:]


@pytest.mark.parametrize(
    "builder, kwargs, old, new",
    [
        (
            models.deep_sets,
            {"vocabulary_size": 10, "phi_units": ()},
            {"units": 3},
            {"aggregation_kwargs": {"units": 3}},
        ),
        (
            models.deep_sets,
            {"vocabulary_size": 10, "phi_units": (), "aggregation": "lstm"},
            {"lstm_units": 3},
            {"aggregation_kwargs": {"units": 3}},
        ),
        (
            models.set_transformer,
            {"input_dim": 3, "num_heads": 2},
            {"head": "laf", "dim": 8, "units": 3},
            {
                "aggregation": "laf",
                "hidden_units": 8,
                "aggregation_kwargs": {"units": 3},
            },
        ),
        (
            models.point_cloud_classifier,
            {"num_classes": 4},
            {"pooling": "laf", "width": 8, "units": 3},
            {
                "aggregation": "laf",
                "hidden_units": 8,
                "aggregation_kwargs": {"units": 3},
            },
        ),
        (
            models.graph_network,
            {"num_layers": 1},
            {"laf_units": 3},
            {"aggregation_kwargs": {"units": 3}},
        ),
    ],
)
def test_0_1_0_arguments_still_work_with_a_deprecation_warning(
    builder, kwargs, old, new
):
    keras.utils.set_random_seed(0)
    with pytest.warns(DeprecationWarning, match="removed in keras-laf 0.3.0"):
        former = builder(**kwargs, **old)
    keras.utils.set_random_seed(0)
    current = builder(**kwargs, **new)
    assert [w.shape for w in former.weights] == [
        w.shape for w in current.weights
    ]


def counted_graphs(num_graphs, max_nodes):
    """Random graphs of 3..`max_nodes` nodes with 4 features and twice as
    many edges, and labels of their numbers of nodes: the nodes, edges
    and labels."""
    rng = np.random.default_rng(0)
    sizes = rng.integers(3, max_nodes + 1, num_graphs)
    nodes = [rng.random((n, 4)).astype("float32") for n in sizes]
    edges = [rng.integers(0, n, (2 * n, 2)) for n in sizes]
    labels = np.array([[float(n)] for n in sizes], "float32")
    return nodes, edges, labels


def counted_graph_batches(num_graphs, max_nodes, pad=True):
    """`GraphBatches` of 8 of `counted_graphs`."""
    nodes, edges, labels = counted_graphs(num_graphs, max_nodes)
    return datasets.GraphBatches(
        nodes, edges, graph_labels=labels, batch_size=8, pad=pad
    )


@pytest.mark.multi_backend
@pytest.mark.skipif(
    keras.config.backend() == "torch",
    reason="jit_compile=True on PyTorch is torch.compile, not XLA",
)
@pytest.mark.parametrize("aggregation", ["lstm", "gru", "gmt"])
def test_graph_network_padding_segments_trains_when_xla_is_asked(aggregation):
    # These pad the sets of segment ids. On TensorFlow that goes through a
    # ragged tensor, which XLA cannot compile: the model falls back to no
    # XLA, with Keras's warning, and trains (before, `fit` failed with
    # "Detected unsupported operations ... RaggedTensorToTensor"). JAX pads
    # to static widths and compiles.
    batches = counted_graph_batches(num_graphs=16, max_nodes=7)
    keras.utils.set_random_seed(0)
    model = models.molecule_network(
        4, None, aggregation=aggregation, readout_aggregation="sum"
    )
    on_tensorflow = keras.config.backend() == "tensorflow"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.compile(optimizer="adam", loss="mae", jit_compile=True)
    assert model.jit_compile is not on_tensorflow
    assert on_tensorflow == any(
        "jit_compile" in str(warning.message) for warning in caught
    )
    history = model.fit(batches, epochs=2, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))


@pytest.mark.multi_backend
def test_graph_model_compiles_padded_batches_with_xla_on_tensorflow():
    # Keras's jit_compile="auto" leaves XLA off on TensorFlow's CPU;
    # GraphModel turns it on for padded batches (a few bucket shapes) and
    # leaves Keras's choice for others, or where the user chose.
    backend = keras.config.backend()
    padded = counted_graph_batches(num_graphs=16, max_nodes=7)

    def compiled(aggregation="sum", **compile_arguments):
        keras.utils.set_random_seed(0)
        model = models.molecule_network(
            4, None, aggregation=aggregation, readout_aggregation="sum"
        )
        with warnings.catch_warnings():
            warnings.simplefilter("error", UserWarning)
            model.compile(optimizer="adam", loss="mae", **compile_arguments)
        return model

    model = compiled()
    keras_default = model.jit_compile
    assert keras_default is (backend == "jax")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        padded_loss = model.fit(padded, epochs=2, verbose=0).history["loss"]
    assert model.jit_compile is (backend != "torch")
    if backend == "jax":
        return
    nodes, edges, _ = counted_graphs(num_graphs=3, max_nodes=7)
    union = datasets.disjoint_union(nodes, edges, pad=False)
    predictions = model.predict(union, verbose=0)["graph_outputs"]
    assert model.jit_compile is (backend == "tensorflow")
    with warnings.catch_warnings():
        # Unpadded batches warn on JAX only, which returned above.
        warnings.simplefilter("error", UserWarning)
        unpadded = counted_graph_batches(16, 7, pad=False)
        model.fit(unpadded, epochs=1, verbose=0)
    assert model.jit_compile is False
    # Padded training data and unpadded validation data: the validation
    # between the epochs leaves the training step as it is.
    history = model.fit(padded, validation_data=unpadded, epochs=2, verbose=0)
    assert np.all(np.isfinite(history.history["val_loss"]))
    # The same steps without XLA: the same first loss, the same outputs.
    without = compiled(jit_compile=False)
    without_loss = without.fit(padded, epochs=2, verbose=0).history["loss"]
    assert without.jit_compile is False
    np.testing.assert_allclose(padded_loss[0], without_loss[0], rtol=1e-4)
    model.set_weights(without.get_weights())
    np.testing.assert_allclose(
        model.predict(union, verbose=0)["graph_outputs"],
        without.predict(union, verbose=0)["graph_outputs"],
        rtol=1e-4,
        atol=1e-5,
    )
    assert predictions.shape == (3, 1)
    # A layer that XLA cannot compile on TensorFlow: no XLA, no warning.
    recurrent = compiled("lstm")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        recurrent.fit(padded, epochs=1, verbose=0)
    assert recurrent.jit_compile is False


@pytest.mark.parametrize("aggregation", ["sum", "laf", "pna"])
def test_graph_network_trains_under_xla_as_without(aggregation):
    # The backends guide's advice for TensorFlow on a CPU: a graph
    # network's step compiled whole with XLA, one program per bucket of
    # GraphBatches, learns what the step without XLA learns.
    def losses(jit_compile):
        keras.utils.set_random_seed(0)
        model = models.molecule_network(
            4, None, aggregation=aggregation, readout_aggregation=aggregation
        )
        model.compile(optimizer="adam", loss="mae", jit_compile=jit_compile)
        batches = counted_graph_batches(num_graphs=24, max_nodes=11)
        history = model.fit(batches, epochs=3, verbose=0)
        assert model.jit_compile is jit_compile
        return history.history["loss"]

    with_xla, without = losses(True), losses(False)
    # Float32 sums in another order: the first epoch's loss agrees closely
    # (PNA's to 1.1e-4 on one core), later ones drift apart as the MAE's
    # signs flip.
    np.testing.assert_allclose(with_xla[0], without[0], rtol=3e-4)
    np.testing.assert_allclose(with_xla, without, rtol=0.05)
    assert with_xla[-1] < 0.9 * with_xla[0]
