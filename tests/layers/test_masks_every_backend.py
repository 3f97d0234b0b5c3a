"""Every set layer, padded with a mask, equals each set alone, on every
Keras backend.
"""

import keras
import numpy as np
import pytest
from backend_helpers import numpy
from backend_helpers import padded

import keras_laf

pytestmark = pytest.mark.multi_backend


@pytest.mark.parametrize(
    "layer",
    [
        lambda: keras_laf.FixedAggregation(["sum", "max", "mean"]),
        lambda: keras_laf.LAF(units=3),
        lambda: keras_laf.PermutationEquivariant(4),
        lambda: keras_laf.SAB(dim=4, num_heads=2),
        lambda: keras_laf.ISAB(dim=4, num_heads=2, num_inducing=2),
        lambda: keras_laf.PMA(num_seeds=1, dim=4, num_heads=2),
        lambda: keras_laf.PerElement(keras.layers.Dense(3)),
    ],
    ids=["fixed", "laf", "equivariant", "sab", "isab", "pma", "per_element"],
)
def test_layers_padded_with_mask_equal_each_set_alone(sets, layer):
    layer = layer()
    values, mask = padded(sets, 6)
    outputs = numpy(layer(values, mask=mask))
    for i, elements in enumerate(sets):
        alone = numpy(layer(elements[None].astype("float32")))[0]
        if outputs.ndim == 3 and outputs.shape[1] == 6:  # keeps the set
            np.testing.assert_allclose(
                outputs[i, : len(elements)], alone, rtol=1e-4, atol=1e-6
            )
        else:
            np.testing.assert_allclose(outputs[i], alone, rtol=1e-4, atol=1e-6)
