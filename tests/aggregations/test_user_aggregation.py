"""A user's own aggregation, registered by name, works everywhere an
aggregation is taken: the registry, the combinations, the graph layers
and the builders, and it saves and reloads, on every backend."""

import os

import keras
import numpy as np
import pytest
from backend_helpers import numpy
from keras import ops

import keras_laf
from keras_laf import aggregations

pytestmark = pytest.mark.multi_backend

NAME = "scaled_sum_of_the_tests"


@aggregations.register(NAME)
class ScaledSum(keras_laf.SetAggregation):
    """The sum of each feature over each set, times a learned scale."""

    num_aggregates = 1

    def __init__(self, initial_scale=1.0, **kwargs):
        super().__init__(**kwargs)
        self.initial_scale = float(initial_scale)

    def build(self, input_shape):
        super().build(input_shape)
        self.scale = self.add_weight(
            name="scale",
            shape=(),
            initializer=keras.initializers.Constant(self.initial_scale),
        )

    def aggregate(self, values, sets):
        # (num_sets, features, 1)
        return ops.expand_dims(self.scale * sets.sum(values), -1)

    def get_config(self):
        return {**super().get_config(), "initial_scale": self.initial_scale}


RNG = np.random.default_rng(0)
# Two sets of 4 elements with 3 features; the second holds 2.
SETS = RNG.uniform(size=(2, 4, 3)).astype("float32")
MASK = np.array([[1, 1, 1, 1], [1, 1, 0, 0]], bool)
# A graph of 5 nodes; node 4 receives no edge.
NODES = RNG.uniform(size=(5, 3)).astype("float32")
SOURCE = np.array([0, 1, 2, 3, 3, 0], "int32")
TARGET = np.array([1, 2, 0, 0, 1, 3], "int32")


def scaled_sums(values, segment_ids, num_segments, scale):
    sums = np.zeros((num_segments, values.shape[-1]), "float64")
    np.add.at(sums, segment_ids, values)
    return scale * sums


def test_by_name_in_the_registry_with_its_arguments():
    assert NAME in aggregations.names()
    layer = aggregations.get(NAME, initial_scale=2.0)
    assert type(layer) is ScaledSum
    expected = 2.0 * np.where(MASK[..., None], SETS, 0).sum(1)
    np.testing.assert_allclose(
        numpy(layer(SETS, mask=MASK)), expected, rtol=1e-6
    )
    assert aggregations.num_aggregates(NAME) == 1
    with pytest.raises(ValueError, match="takes no argument 'scale'"):
        aggregations.get(NAME, scale=2.0)


def test_by_name_in_the_combinations():
    multi = keras_laf.MultiAggregation(
        [NAME, "max"], aggregations_kwargs=[{"initial_scale": 3.0}, {}]
    )
    outputs = numpy(multi(SETS, mask=MASK))
    real = np.where(MASK[..., None], SETS, 0)
    np.testing.assert_allclose(outputs[:, :3], 3.0 * real.sum(1), rtol=1e-6)
    maxima = np.where(MASK[..., None], SETS, -np.inf).max(1)
    np.testing.assert_allclose(outputs[:, 3:], maxima, rtol=1e-6)
    scaled = keras_laf.DegreeScalerAggregation(
        NAME, ["identity", "linear"], average_log_degree=np.log(4.0)
    )
    outputs = numpy(scaled(SETS, mask=MASK))
    sizes = MASK.sum(1)[:, None]
    np.testing.assert_allclose(outputs[:, :3], real.sum(1), rtol=1e-6)
    np.testing.assert_allclose(
        outputs[:, 3:], real.sum(1) * sizes / 3.0, rtol=1e-5
    )


def test_by_name_in_the_graph_layers():
    readout = keras_laf.GraphReadout(NAME)
    graph_ids = np.array([0, 0, 1, 1, 1], "int32")
    np.testing.assert_allclose(
        numpy(readout(NODES, graph_ids)),
        scaled_sums(NODES, graph_ids, 2, 1.0),
        rtol=1e-6,
    )
    conv = keras_laf.AggregationConv(
        4, aggregation=NAME, aggregation_kwargs={"initial_scale": 0.5}
    )
    conv(NODES, SOURCE, TARGET)
    assert type(conv.aggregation_layer()) is ScaledSum
    messages = numpy(
        conv._message_dense(np.concatenate([NODES[TARGET], NODES[SOURCE]], -1))
    )
    np.testing.assert_allclose(
        numpy(conv.aggregate_neighbours(NODES, SOURCE, TARGET)),
        scaled_sums(messages, TARGET, 5, 0.5),
        rtol=1e-5,
        atol=1e-6,
    )


def graph_inputs():
    return keras_laf.datasets.disjoint_union(
        [NODES[:3, :2], NODES[3:, :2]],
        [np.array([[0, 1], [1, 2], [2, 0]]), np.array([[0, 1]])],
    )


BUILDERS = {
    "graph_network": (
        lambda: keras_laf.models.graph_network(
            aggregation=NAME, hidden_units=4, num_layers=1
        ),
        graph_inputs,
    ),
    "deep_sets": (
        lambda: keras_laf.models.deep_sets(
            input_dim=3, aggregation=NAME, phi_units=(4,), rho_units=(4,)
        ),
        lambda: {"sets": SETS, "mask": MASK},
    ),
    "point_cloud_classifier": (
        lambda: keras_laf.models.point_cloud_classifier(
            num_classes=3,
            aggregation=NAME,
            hidden_units=4,
            num_equivariant_layers=1,
            input_dim=3,
        ),
        lambda: {"sets": SETS, "mask": MASK},
    ),
}


@pytest.mark.parametrize("builder", sorted(BUILDERS))
def test_by_name_in_the_builders_and_saved(builder, tmp_path):
    build, inputs = BUILDERS[builder]
    keras.utils.set_random_seed(1)
    model = build()
    assert any(
        isinstance(sublayer, ScaledSum)
        for layer in model.layers
        for sublayer in layer._flatten_layers()
    )
    data = inputs()
    for weight in model.weights:
        weight.assign(weight + 0.1)
    expected = keras.tree.map_structure(numpy, model.predict_on_batch(data))
    path = os.path.join(tmp_path, "model.keras")
    model.save(path)
    reloaded = keras.models.load_model(path)
    keras.tree.map_structure(
        lambda actual, wanted: np.testing.assert_allclose(
            numpy(actual), wanted, rtol=1e-5, atol=1e-6
        ),
        reloaded.predict_on_batch(data),
        expected,
    )
