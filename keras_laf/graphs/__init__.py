"""Graph layers over disjoint-union batches of graphs.

- `base`: `GraphLayer`, the aggregation every graph layer holds (a name,
  a list or a layer, resolved once) and its node-features input;
- `message_passing`: `GraphConvolution`, the message-passing template
  (`edges`, `message`, `aggregate`, `update`, with optional edge
  features) that every convolution subclasses, and the disjoint-union
  form of the graphs;
- `aggregation_conv`: `AggregationConv`, messages aggregated by any
  aggregation (LAF, fixed, PNA's scalers as `DegreeScalerAggregation`)
  (`MessagePassing`, 0.1.0's layer, is in `keras_laf.compat`);
- `convolutions`: the paper's graph baselines `GINConv`, `GCNConv` and
  `GATConv`, and `GINEConv`, GIN with edge features;
- `readout`: `GraphReadout`, the nodes of each graph aggregated;
- `common`: the input checks and sub-layers they share.
"""

from keras_laf.graphs.aggregation_conv import AggregationConv
from keras_laf.graphs.base import GraphLayer
from keras_laf.graphs.convolutions import GATConv
from keras_laf.graphs.convolutions import GCNConv
from keras_laf.graphs.convolutions import GINConv
from keras_laf.graphs.convolutions import GINEConv
from keras_laf.graphs.message_passing import GraphConvolution
from keras_laf.graphs.readout import GraphReadout

__all__ = [
    "AggregationConv",
    "GATConv",
    "GCNConv",
    "GINConv",
    "GINEConv",
    "GraphConvolution",
    "GraphLayer",
    "GraphReadout",
]
