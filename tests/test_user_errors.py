"""What a user sees for a wrong argument or an out-of-range element."""

import pytest
import tensorflow as tf

from keras_laf import LAF
from keras_laf import MAB
from keras_laf import PMA
from keras_laf import GATConv
from keras_laf import GCNConv
from keras_laf import GINConv
from keras_laf import GraphReadout
from keras_laf import LSTMAggregation
from keras_laf import MessagePassing
from keras_laf import PermutationEquivariant
from keras_laf.models import deep_sets
from keras_laf.models import set_expansion


@pytest.mark.parametrize(
    "build, received",
    [
        (lambda: LAF(units="3"), "units='3' (of type str)"),
        (lambda: LAF(units=3.0), "units=3.0 (of type float)"),
        (lambda: LAF(units=True), "units=True (of type bool)"),
        (lambda: LAF(units=None), "units=None (of type NoneType)"),
        (lambda: LAF(units=0), "units=0"),
        (lambda: PermutationEquivariant("8"), "units='8' (of type str)"),
        (lambda: LSTMAggregation(units="4"), "units='4' (of type str)"),
        (lambda: MAB(dim="8", num_heads=2), "dim='8' (of type str)"),
        (lambda: PMA(8, 2, num_seeds="1"), "num_seeds='1' (of type str)"),
        (lambda: MessagePassing("8"), "units='8' (of type str)"),
        (
            lambda: GraphReadout("laf", aggregation_kwargs={"units": "2"}),
            "units='2' (of type str)",
        ),
        (lambda: GINConv("8"), "units='8' (of type str)"),
        (lambda: GCNConv(8.0), "units=8.0 (of type float)"),
        (lambda: GATConv(8, num_heads="2"), "num_heads='2' (of type str)"),
        (
            lambda: set_expansion(vocabulary_size="10"),
            "vocabulary_size='10' (of type str)",
        ),
        (
            lambda: deep_sets(vocabulary_size="10"),
            "vocabulary_size='10' (of type str)",
        ),
    ],
)
def test_wrong_argument_is_reported_with_its_type(build, received):
    with pytest.raises(ValueError) as error:
        build()
    assert str(error.value).endswith(f"Received: {received}")


@pytest.mark.skipif(
    bool(tf.config.list_physical_devices("GPU")),
    reason="on a GPU the embedding gives zeros for out-of-range indices",
)
def test_out_of_range_element_names_index_and_vocabulary():
    # As keras.layers.Embedding documents: the check happens when the
    # embedding gathers, so the message gives the index and the range.
    model = deep_sets(vocabulary_size=10, phi_units=(), ragged=True)
    sets = tf.ragged.constant([[3, 12], [1]])
    with pytest.raises(
        tf.errors.InvalidArgumentError, match=r"12 is not in \[0, 10\)"
    ):
        model(sets)
