"""Model builders of keras-laf, imported as `keras_laf.models`."""
