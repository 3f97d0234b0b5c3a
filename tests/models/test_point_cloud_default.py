"""`point_cloud_classifier()` pools with LAF by default."""

import keras
import numpy as np
import pytest

import keras_laf
from keras_laf import models


@pytest.mark.multi_backend
def test_point_cloud_classifier_pools_with_laf_by_default():
    model = models.point_cloud_classifier(
        num_classes=3, hidden_units=8, dropout=0.0
    )
    laf = model.get_layer("laf")
    assert isinstance(laf, keras_laf.LAF)
    assert laf.units == 10 and laf.preset == "pooling"
    # The pooled features are LAF of the equivariant features mapped into
    # [0, 1], not their maximum.
    clouds = np.random.default_rng(0).normal(size=(2, 6, 3)).astype("float32")
    inputs = [clouds, np.ones((2, 6), "float32")]
    features = keras.Model(
        model.inputs,
        [model.get_layer("to_unit_interval").output, laf.output],
    )
    mapped, pooled = (
        keras.ops.convert_to_numpy(value) for value in features(inputs)
    )
    np.testing.assert_allclose(
        pooled, keras.ops.convert_to_numpy(laf(mapped)), rtol=1e-5
    )
    assert pooled.shape == (2, 8 * 10)
