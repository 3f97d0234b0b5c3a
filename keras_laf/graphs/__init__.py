"""Graph layers over disjoint-union batches of graphs.

- `base`: `GraphLayer`, the aggregation every graph layer holds (a name,
  a list or a layer, resolved once) and its node-features input, and
  `GraphConvolution`, the base of the convolutions;
- `message_passing`: `AggregationConv`, messages aggregated by any
  aggregation (LAF, fixed, PNA's scalers as `DegreeScalerAggregation`)
  (`MessagePassing`, 0.1.0's layer, is in `keras_laf.compat`);
- `readout`: `GraphReadout`, the nodes of each graph aggregated;
- `convolutions`: the paper's graph baselines `GINConv`, `GCNConv` and
  `GATConv`;
- `common`: the input checks and sub-layers they share.
"""

from keras_laf.graphs.base import GraphConvolution
from keras_laf.graphs.base import GraphLayer
from keras_laf.graphs.convolutions import GATConv
from keras_laf.graphs.convolutions import GCNConv
from keras_laf.graphs.convolutions import GINConv
from keras_laf.graphs.message_passing import AggregationConv
from keras_laf.graphs.readout import GraphReadout

__all__ = [
    "AggregationConv",
    "GATConv",
    "GCNConv",
    "GINConv",
    "GraphConvolution",
    "GraphLayer",
    "GraphReadout",
]
