"""The LAF layer and what shapes it.

- `layer`: `keras_laf.LAF`, the learnable aggregation function;
- `presets`: how its units start and are constrained (`"pooling"`,
  `"closed_forms"`, `"paper"`);
- `constraints`, `initializers`: the constraints and the starting
  parameters the presets are made of;
- `closed_forms`: the aggregators of the paper's Table 1 as LAF
  parameters, and how a trained unit is matched to them;
- `callbacks`: `SnapToClosedForms`, which snaps units onto closed forms
  during training, and `LeastSquaresHead`, which refits a linear head
  onto them at its end.

The formula itself, on tensors, is `keras_laf.ops`.
"""

from keras_laf.aggregations.laf import callbacks
from keras_laf.aggregations.laf import closed_forms
from keras_laf.aggregations.laf import constraints
from keras_laf.aggregations.laf import initializers
from keras_laf.aggregations.laf import presets
from keras_laf.aggregations.laf.layer import LAF

__all__ = [
    "LAF",
    "callbacks",
    "closed_forms",
    "constraints",
    "initializers",
    "presets",
]
