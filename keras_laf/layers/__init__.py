"""Set layers that are not aggregations: sets in, sets out.

- `attention`: the Set Transformer blocks `MAB`, `SAB`, `ISAB` and `PMA`;
- `equivariant`: DeepSets' `PermutationEquivariant`;
- `per_element`: `PerElement`, a layer applied to every element of every
  set.
"""

from keras_laf.layers.attention import ISAB
from keras_laf.layers.attention import MAB
from keras_laf.layers.attention import PMA
from keras_laf.layers.attention import SAB
from keras_laf.layers.equivariant import PermutationEquivariant
from keras_laf.layers.per_element import PerElement

__all__ = [
    "ISAB",
    "MAB",
    "PMA",
    "PerElement",
    "PermutationEquivariant",
    "SAB",
]
