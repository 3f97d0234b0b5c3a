"""The backend hooks on PyTorch (see `keras_laf.core.backend`).

The segment reductions scatter each element's row into its segment's in
place of Keras's: `index_add` for sums (its gradient one `index_select`)
and `scatter_reduce` from `-inf` for maxima, with the segment ids
broadcast over the row as a view; Keras's copies the ids once per value
and converts the values to float32. The exponentials of LAF's padded
sets flush results below the smallest normal number to 0, in place:
PyTorch's exponential takes its slow path on every input whose result
underflows, as padding's do. LAF takes padded sets, in eager calls,
as their real elements with segment ids: the segment path skips the
padding.
The rest is the generic `keras.ops`.
"""

import numpy as np
from keras import ops

from keras_laf.core.backend import generic
from keras_laf.core.backend.generic import checks_values_in_traces
from keras_laf.core.backend.generic import jit_compile_means_xla
from keras_laf.core.backend.generic import laf_programs
from keras_laf.core.backend.generic import lists_devices
from keras_laf.core.backend.generic import most_elements_per_chunk
from keras_laf.core.backend.generic import needs_static_shapes
from keras_laf.core.backend.generic import sum_over_chunks
from keras_laf.core.backend.generic import sums_over_elements
from keras_laf.core.backend.generic import takes_ragged_tensors
from keras_laf.core.backend.generic import weighted_sum_over_units

try:
    import torch
except ImportError:
    torch = None

__all__ = [
    "checks_values_in_traces",
    "exponentials",
    "is_traced",
    "jit_compile_means_xla",
    "laf_programs",
    "lists_devices",
    "most_elements_per_chunk",
    "needs_static_shapes",
    "prefers_segments_for_padded_sets",
    "segment_max",
    "segment_sum",
    "sum_over_chunks",
    "sums_over_elements",
    "takes_ragged_tensors",
    "weighted_sum_over_units",
]


def exponentials(exponents):
    exponents = ops.convert_to_tensor(exponents)
    # log of the smallest normal number: below it, exp underflows.
    lowest = float(np.log(torch.finfo(exponents.dtype).tiny))
    underflows = exponents < lowest
    if exponents.requires_grad:
        return torch.exp(exponents.masked_fill(underflows, float("-inf")))
    return exponents.masked_fill_(underflows, float("-inf")).exp_()


def prefers_segments_for_padded_sets():
    return True


def _segments_shape(values, num_segments):
    return (int(num_segments), *values.shape[1:])


def segment_sum(values, segment_ids, num_segments):
    values = ops.convert_to_tensor(values)
    index = ops.convert_to_tensor(segment_ids).long()
    totals = values.new_zeros(_segments_shape(values, num_segments))
    # In place into the fresh zeros: no copy of them.
    return totals.index_add_(0, index, values)


def segment_max(values, segment_ids, num_segments, sizes):
    values = ops.convert_to_tensor(values)
    if not values.is_floating_point():
        return generic.segment_max(values, segment_ids, num_segments, sizes)
    index = ops.convert_to_tensor(segment_ids).long()
    # (num_elements, 1, ..., 1) viewed as the values' shape: no copy.
    index = index.view(-1, *[1] * (values.dim() - 1)).expand_as(values)
    maxima = values.new_full(
        _segments_shape(values, num_segments), float("-inf")
    )
    return maxima.scatter_reduce(0, index, values, "amax", include_self=True)


def is_traced(tensor):
    # Inside `torch.compile`, and while a functional model is built (on
    # the "meta" device).
    return torch.compiler.is_compiling() or getattr(tensor, "is_meta", False)
