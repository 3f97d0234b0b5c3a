"""The molecule network trained on two virtual CPU devices, against the
same training on one.

A batch of graphs is one disjoint union: its nodes, edges and graphs are
arrays of different lengths whose indices point into one another, so it
cannot be cut along its first axis as a batch of sets can.

- JAX's `keras.distribution.DataParallel` shards every array of the
  union along its first axis, but `jax.jit` computes on the global
  arrays (XLA moves what a gather needs between the devices), so the
  padded batches of `MoleculeBatches` train as on one device. Each
  array's length must divide by the number of devices, which the
  buckets (powers of 2 from 16) do and an unpadded union may not;
  `GraphBatches` names a bucket that does not before the first step.
- TensorFlow's `MirroredStrategy` runs the model on each replica's
  slice, and cutting a union in two leaves edges pointing at nodes on
  the other replica, which the graph layers' index checks reject.
  `GraphBatches.distribute` gives each replica a union of its own, all
  padded to the same sizes, which the replicas of one step need.

Each script trains from the same starting weights on one device and on
two, with the molecules in the same order (`shuffle=False`: `fit`
otherwise shuffles the order of a `PyDataset`'s batches), and the test
compares the losses of each epoch and the final weights.
"""

import textwrap

import numpy as np
import pytest
from backend_helpers import run_in_fresh_interpreter

pytestmark = pytest.mark.multi_backend

# Eight small molecules, four per global batch, two per replica. LAF
# aggregates both the neighbours and the readout, so its power sums run
# on each device. The target, heavy atoms / 4, needs no featuriser.
TRAINING = textwrap.dedent(
    """
    import json

    import keras
    import numpy as np

    from keras_laf import datasets
    from keras_laf import models
    from keras_laf.datasets import molecules

    SMILES = ["CCO", "c1ccccc1", "CC(=O)O", "CCN", "C1CCCCC1", "CC(C)O",
              "OCC(O)CO", "c1ccncc1"]
    graphs = datasets.smiles_to_graphs(SMILES, workers=1)
    labels = graphs.num_atoms[:, None].astype("float32") / 4
    GLOBAL_BATCH = 4


    def molecule_model():
        return models.molecule_network(
            molecules.NUM_ATOM_FEATURES,
            molecules.NUM_BOND_FEATURES,
            aggregation="laf",
            aggregation_kwargs={"units": 2},
            readout_aggregation="laf",
            readout_aggregation_kwargs={"units": 2},
            hidden_units=8,
        )


    keras.utils.set_random_seed(0)
    START = molecule_model().get_weights()


    def train(scope, data, **fit_arguments):
        with scope:
            model = molecule_model()
            model.set_weights(START)
            model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mae")
            history = model.fit(
                data, epochs=2, shuffle=False, verbose=0, **fit_arguments
            )
        return model, history.history["loss"]


    def result(one, distributed, **extra):
        (one_model, one_losses), (model, losses) = one, distributed
        print(json.dumps({
            "one_device": one_losses,
            "two_devices": losses,
            "largest_weight_difference": max(
                float(np.abs(a - b).max())
                for a, b in zip(one_model.get_weights(), model.get_weights())
            ),
            **extra,
        }))
    """
)

JAX_SCRIPT = TRAINING + textwrap.dedent(
    """
    import contextlib

    devices = keras.distribution.list_devices("cpu")
    data_parallel = keras.distribution.DataParallel(devices=devices)
    one = train(contextlib.nullcontext(), datasets.MoleculeBatches(
        graphs, labels, batch_size=GLOBAL_BATCH))
    distributed = train(data_parallel.scope(), datasets.MoleculeBatches(
        graphs, labels, batch_size=GLOBAL_BATCH))

    # An unpadded union of 3 molecules has 13 atoms: the shards of its
    # arrays must be of one size, so JAX refuses it, which shows that
    # the inputs are split across the devices.
    inputs, targets = graphs.subset([0, 1, 2]).batch(labels[:3])
    with data_parallel.scope():
        try:
            distributed[0].train_on_batch(inputs, targets)
            unpadded = "trained"
        except Exception as error:
            unpadded = type(error).__name__
    # Buckets of 15, 30, ...: 4 molecules and the padding graph in 15
    # rows, which 2 devices cannot share; named before the first step.
    try:
        train(data_parallel.scope(), datasets.MoleculeBatches(
            graphs, labels, batch_size=GLOBAL_BATCH, smallest=15))
        odd_buckets = "trained"
    except ValueError as error:
        odd_buckets = str(error)
    result(
        one,
        distributed,
        devices=len(devices),
        weight_devices=len(distributed[0].weights[0].value.sharding.device_set),
        unpadded=unpadded,
        odd_buckets=odd_buckets,
    )
    """
)

MIRRORED_SCRIPT = (
    textwrap.dedent(
        """
        import tensorflow as tf

        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * 2
        )
        """
    )
    + TRAINING
    + textwrap.dedent(
        """
        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
        # Keras averages the steps' losses weighted by the rows of the
        # first input, which padding sets: every step alike, as the
        # replicas' unions of one size are.
        one = train(tf.distribute.get_strategy().scope(),
                    datasets.MoleculeBatches(
                        graphs, labels, batch_size=GLOBAL_BATCH, pad="fixed"))
        dataset, steps = datasets.MoleculeBatches(
            graphs, labels, batch_size=GLOBAL_BATCH).distribute(strategy)
        distributed = train(strategy.scope(), dataset, steps_per_epoch=steps)

        # The global unions cut in two along their first axis.
        try:
            train(strategy.scope(), datasets.MoleculeBatches(
                graphs, labels, batch_size=GLOBAL_BATCH))
            cut = "trained"
        except tf.errors.InvalidArgumentError as error:
            cut = error.message

        # Unions of different sizes on the replicas of one step, the
        # reason `distribute` pads them to the same sizes: benzene and
        # cyclohexane (24 bonds, padded to 32) on one replica, ethanol
        # and ethylamine (8, padded to 16) on the other.
        order = [1, 4, 0, 3, 2, 5, 6, 7]
        buckets = datasets.MoleculeBatches(
            graphs.subset(order), labels[order], batch_size=GLOBAL_BATCH // 2)

        def replica_buckets(context):
            def generate():
                for index in range(len(buckets)):
                    yield buckets[index]

            def spec(array):
                return tf.TensorSpec((None, *array.shape[1:]), array.dtype)

            return tf.data.Dataset.from_generator(
                generate, output_signature=tf.nest.map_structure(
                    spec, buckets[0])).repeat()

        try:
            train(
                strategy.scope(),
                strategy.distribute_datasets_from_function(replica_buckets),
                steps_per_epoch=steps,
            )
            uneven = "trained"
        except tf.errors.InvalidArgumentError as error:
            uneven = error.message
        try:
            datasets.MoleculeBatches(graphs, labels, batch_size=3).distribute(
                strategy)
            odd_batch = "distributed"
        except ValueError as error:
            odd_batch = str(error)
        result(one, distributed, replicas=strategy.num_replicas_in_sync,
               steps=steps, cut=cut, uneven=uneven, odd_batch=odd_batch)
        """
    )
)


def assert_trains_as_on_one_device(outcome):
    # float32 sums in another order on each device.
    np.testing.assert_allclose(
        outcome["two_devices"], outcome["one_device"], rtol=1e-5
    )
    assert outcome["largest_weight_difference"] < 1e-5, outcome
    # The losses of an epoch that trained.
    assert outcome["one_device"][1] < outcome["one_device"][0]


@pytest.mark.slow
@pytest.mark.tensorflow_only("runs JAX in its own interpreter")
def test_molecule_network_trains_under_jax_data_parallel():
    pytest.importorskip("jax")
    pytest.importorskip("rdkit")
    outcome = run_in_fresh_interpreter(
        JAX_SCRIPT,
        "jax",
        env={"XLA_FLAGS": "--xla_force_host_platform_device_count=2"},
    )
    assert outcome["devices"] == outcome["weight_devices"] == 2, outcome
    assert outcome["unpadded"] == "IndivisibleError", outcome
    assert (
        "Batch 0 has 15 graphs, which the 2 devices of DataParallel"
        in (outcome["odd_buckets"])
    ), outcome
    assert_trains_as_on_one_device(outcome)


@pytest.mark.slow
@pytest.mark.tensorflow_only("sets TensorFlow's logical devices")
def test_molecule_network_trains_under_mirrored_strategy():
    pytest.importorskip("rdkit")
    outcome = run_in_fresh_interpreter(MIRRORED_SCRIPT, "tensorflow")
    assert outcome["replicas"] == outcome["steps"] == 2, outcome
    assert_trains_as_on_one_device(outcome)
    # Cut along the first axis, a union's edges point at nodes of the
    # other replica: the graph layers' index checks stop the step.
    assert "holds_an_index_beyond" in outcome["cut"], outcome
    # Unions of different sizes on the replicas of one step fail in
    # TensorFlow's distribution code; when this trains, `distribute`
    # need not pad every union to the same sizes.
    assert "must have the same size and shape" in outcome["uneven"], outcome
    assert (
        "must divide by the strategy's 2 replicas" in (outcome["odd_batch"])
    ), outcome
