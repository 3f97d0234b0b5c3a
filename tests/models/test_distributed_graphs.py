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
  buckets (powers of 2 from 16) do and an unpadded union may not.
- TensorFlow's `MirroredStrategy` runs the model on each replica's
  slice, and cutting a union in two leaves edges pointing at nodes on
  the other replica, which the graph layers' index checks reject. Each
  replica gets a union of its own instead:
  `strategy.distribute_datasets_from_function` hands the elements of a
  dataset of per-replica `MoleculeBatches` to the replicas in turn. The
  unions of one step must also have the same padded sizes on every
  replica.

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
    result(
        one,
        distributed,
        devices=len(devices),
        weight_devices=len(distributed[0].weights[0].value.sharding.device_set),
        unpadded=unpadded,
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
        def as_dataset(batches):
            # A `PyDataset` as a `tf.data.Dataset`, one union per element.
            def spec(array):
                return tf.TensorSpec((None, *array.shape[1:]), array.dtype)

            def generate():
                for index in range(len(batches)):
                    yield batches[index]
                batches.on_epoch_end()

            # Repeated, with `steps_per_epoch`: at the end of a finite
            # distributed dataset, Keras 3.15 counts one more optimizer
            # iteration each epoch, which shifts Adam's bias correction.
            return tf.data.Dataset.from_generator(
                generate, output_signature=tf.nest.map_structure(
                    spec, batches[0])).repeat()


        def replica_batches(context, order=None):
            per_replica = context.get_per_replica_batch_size(GLOBAL_BATCH)
            order = range(len(graphs)) if order is None else order
            return as_dataset(datasets.MoleculeBatches(
                graphs.subset(order), labels[order], batch_size=per_replica))


        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
        one = train(tf.distribute.get_strategy().scope(),
                    datasets.MoleculeBatches(
                        graphs, labels, batch_size=GLOBAL_BATCH))
        distributed = train(
            strategy.scope(),
            strategy.distribute_datasets_from_function(replica_batches),
            steps_per_epoch=len(graphs) // GLOBAL_BATCH,
        )

        # The global unions cut in two along their first axis.
        try:
            train(strategy.scope(), datasets.MoleculeBatches(
                graphs, labels, batch_size=GLOBAL_BATCH))
            cut = "trained"
        except tf.errors.InvalidArgumentError as error:
            cut = error.message

        # Benzene and cyclohexane (24 bonds, padded to 32) on one replica,
        # ethanol and ethylamine (8, padded to 16) on the other.
        try:
            train(
                strategy.scope(),
                strategy.distribute_datasets_from_function(
                    lambda context: replica_batches(
                        context, [1, 4, 0, 3, 2, 5, 6, 7])),
                steps_per_epoch=len(graphs) // GLOBAL_BATCH,
            )
            uneven = "trained"
        except tf.errors.InvalidArgumentError as error:
            uneven = error.message
        result(one, distributed, replicas=strategy.num_replicas_in_sync,
               cut=cut, uneven=uneven)
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
    assert_trains_as_on_one_device(outcome)


@pytest.mark.slow
@pytest.mark.tensorflow_only("sets TensorFlow's logical devices")
def test_molecule_network_trains_under_mirrored_strategy():
    pytest.importorskip("rdkit")
    outcome = run_in_fresh_interpreter(MIRRORED_SCRIPT, "tensorflow")
    assert outcome["replicas"] == 2, outcome
    assert_trains_as_on_one_device(outcome)
    # Cut along the first axis, a union's edges point at nodes of the
    # other replica: the graph layers' index checks stop the step.
    assert "holds_an_index_beyond" in outcome["cut"], outcome
    # Unions of different sizes on the replicas of one step fail in
    # TensorFlow's distribution code (the guide says to pad them to one
    # size); when this trains, the guide's advice can go.
    assert "must have the same size and shape" in outcome["uneven"], outcome
