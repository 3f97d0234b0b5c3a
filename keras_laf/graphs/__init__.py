"""Graph layers over disjoint-union batches of graphs.

- `message_passing`: `MessagePassing`, messages aggregated by LAF or fixed
  aggregators (with PNA's degree scalers);
- `readout`: `GraphReadout`, the nodes of each graph aggregated;
- `convolutions`: the paper's graph baselines `GINConv`, `GCNConv` and
  `GATConv`;
- `common`: the input checks and sub-layers they share.
"""

from keras_laf.graphs.convolutions import GATConv
from keras_laf.graphs.convolutions import GCNConv
from keras_laf.graphs.convolutions import GINConv
from keras_laf.graphs.message_passing import MessagePassing
from keras_laf.graphs.readout import GraphReadout

__all__ = [
    "GATConv",
    "GCNConv",
    "GINConv",
    "GraphReadout",
    "MessagePassing",
]
