"""LAF of padded sets on TensorFlow, as three XLA programs.

`keras_laf.ops.laf_over_sets` runs padded sets through
`compiled_padded_laf` on TensorFlow: the forward pass, and the gradient
in two. Segment sets, whose number of sets is a run-time value, run as
plain `keras.ops` (`keras_laf.ops.formula.laf_math`).

Why this path has a gradient harness of its own instead of the custom
gradient of `keras_laf.ops.power_sums.power_sums`: TensorFlow must never
differentiate an XLA-compiled function, and the per-set gradient must be
compiled apart from the loop over the elements (both reasons below), so
the gradient of the whole of LAF is wired by hand here.
"""

import functools

from keras import ops

from keras_laf.core import config
from keras_laf.core.sets import PaddedSets
from keras_laf.core.sets import SegmentSets
from keras_laf.ops import formula
from keras_laf.ops import power_sums

try:
    import tensorflow as tf
except ImportError:
    tf = None

__all__ = ["bucket_size", "compiled_padded_laf", "laf_over_sets"]


def padded_laf_forward(values, mask, exponents, inner, coefficients, *args):
    """LAF of padded sets, and what its gradient needs besides the inputs
    (`per_set_gradients`, `value_gradients`): the power sums, their
    derivatives by the inner exponents, the largest logs and the sets made
    NaN, and the set sizes. `inner` is `exponents`' inner exponents
    (`compiled_padded_laf` says why they are an argument); `args` are
    epsilon, the output limit, the output bound and the chunk budget."""
    epsilon, limit, output_bound, budget = args
    layout = power_sums.padded_power_sums(
        values, mask, epsilon, inner.shape[-1] // 2, budget
    )
    max_logs = power_sums.max_logs(layout, values)
    # The exponentials are never kept: the batch and set axes are unknown
    # when the program is traced, so the whole set is never known to be
    # one chunk (`keras_laf.ops.power_sums.PaddedPowerSums.sums`).
    sums, exponent_derivatives, _ = power_sums.sums(
        layout, values, max_logs, inner
    )
    sets = PaddedSets(mask)
    nonfinite = formula.nonfinite_sets(values, sets)
    sizes = sets.sizes()
    outputs = formula.laf_of_power_sums(
        sums,
        max_logs,
        exponents,
        coefficients,
        nonfinite,
        sizes,
        epsilon,
        limit,
        output_bound,
    )
    return outputs, (sums, max_logs, nonfinite, sizes, exponent_derivatives)


def per_set_gradients(
    sums,
    max_logs,
    nonfinite,
    sizes,
    exponent_derivatives,
    exponents,
    coefficients,
    upstream,
    *args,
):
    """Gradients of `padded_laf_forward`'s outputs with respect to the
    power sums, to the exponents and coefficients through the per-set
    arithmetic, and to the inner exponents through the power sums, given
    their gradient `upstream`; `args` are epsilon, the output limit and
    the output bound."""
    with tf.GradientTape() as tape:
        tape.watch((sums, exponents, coefficients))
        outputs = formula.laf_of_power_sums(
            sums, max_logs, exponents, coefficients, nonfinite, sizes, *args
        )
    grad_sums, grad_exponents, grad_coefficients = tape.gradient(
        outputs,
        (sums, exponents, coefficients),
        upstream,
        tf.UnconnectedGradients.ZERO,
    )
    grad_inner = power_sums.exponent_gradients(exponent_derivatives, grad_sums)
    return grad_sums, grad_exponents, grad_inner, grad_coefficients


def value_gradients(values, mask, max_logs, inner, upstream, *args):
    """The gradient of the power sums of padded sets with respect to the
    values, given their gradient `upstream`; `args` are epsilon and the
    chunk budget."""
    epsilon, budget = args
    layout = power_sums.padded_power_sums(
        values, mask, epsilon, inner.shape[-1] // 2, budget
    )
    return power_sums.value_gradients(layout, values, max_logs, inner, upstream)


# For each kernel of `padded_laf_kernels`, its tensor arguments that hold
# sets, and how many of their leading dimensions (the batch, then the set
# axis) vary from call to call.
_SET_DIMENSIONS = {
    "padded_laf_forward": {0: 2, 1: 2},
    "per_set_gradients": {0: 1, 1: 1, 2: 1, 3: 1, 4: 1, 7: 1},
    "value_gradients": {0: 2, 1: 2, 2: 1, 4: 1},
}


def traced_once_per_layout(kernel, set_dimensions):
    """`kernel` compiled by XLA, traced once for every batch and set size.

    A plain `tf.function` traces anew for every shape; in eager calls on
    sets of several sizes TensorFlow then warns of excessive retracing.
    Here the batch and set dimensions (`set_dimensions`: argument index ->
    number of leading dimensions) are left unknown in the trace, as they
    are when `Model.fit` traces the layer, so a kernel is traced once per
    dtype, feature shape and non-tensor arguments (epsilon, the limit, the
    chunk budget), while XLA still compiles each concrete shape.
    """
    functions = {}

    def call(*args):
        specs, constants = [], []
        for index, value in enumerate(args):
            if not tf.is_tensor(value):
                constants.append((index, value))
                continue
            shape = list(value.shape)
            for axis in range(set_dimensions.get(index, 0)):
                shape[axis] = None
            specs.append((index, tf.TensorSpec(shape, value.dtype)))
        key = (tuple(specs), tuple(constants))
        if key not in functions:
            tensor_indices = [index for index, _ in specs]

            def bound(*tensors):
                full = dict(constants)
                full.update(zip(tensor_indices, tensors, strict=True))
                return kernel(*(full[i] for i in range(len(args))))

            functions[key] = tf.function(
                bound,
                input_signature=[spec for _, spec in specs],
                jit_compile=True,
                autograph=False,
            )
        return functions[key](*(arg for arg in args if tf.is_tensor(arg)))

    return call


@functools.cache
def padded_laf_kernels():
    """`padded_laf_forward`, `per_set_gradients` and `value_gradients` as
    TensorFlow functions compiled by XLA (`traced_once_per_layout`).

    The gradient is two programs: compiled as one, XLA fuses the per-set
    gradient into the loop over the elements and recomputes it for each
    element and unit.
    """
    return tuple(
        traced_once_per_layout(kernel, _SET_DIMENSIONS[kernel.__name__])
        for kernel in (
            padded_laf_forward,
            per_set_gradients,
            value_gradients,
        )
    )


def compiled_padded_laf(
    values, mask, exponents, coefficients, epsilon, limit, output_bound
):
    """`keras_laf.ops.formula.laf_math` of padded sets, as three XLA
    programs (`padded_laf_kernels`): the forward pass, and the gradient in
    two.

    As plain TensorFlow ops, the per-set arithmetic and its gradient run
    one small op at a time. The gradient is wired by hand, so TensorFlow
    never differentiates a compiled function: the gradient of one passes
    integers (shapes, a transpose's permutation) from its forward function
    to its backward one, and when the compiled function runs inside a step
    compiled whole (a Keras model with `jit_compile=True`, the default on a
    GPU), XLA then needs the step's inputs as compile-time constants and
    compiles the step anew for every batch. The forward pass keeps only the
    per-set tensors for the gradient, besides the inputs. The chunk budget
    (`keras_laf.config`) is an argument of the compiled functions, so that
    a new budget traces them anew.

    The inner exponents are selected from `exponents` before the compiled
    functions, which take them as an argument: selected inside, XLA fuses
    the selection into the loops over the exponentials and redoes it for
    every element.
    """
    forward, set_gradients, element_gradients = padded_laf_kernels()
    budget = config.chunk_budget("padded")

    @ops.custom_gradient
    def padded_laf(values, exponents, inner, coefficients):
        # The compiled functions are never differentiated (see above).
        values, exponents, inner, coefficients = (
            ops.stop_gradient(tensor)
            for tensor in (values, exponents, inner, coefficients)
        )
        outputs, residuals = forward(
            values,
            mask,
            exponents,
            inner,
            coefficients,
            epsilon,
            limit,
            output_bound,
            budget,
        )

        def grad(*args, upstream=None):
            if upstream is None:
                (upstream,) = args
            grad_sums, grad_exponents, grad_inner, grad_coefficients = (
                set_gradients(
                    *residuals,
                    exponents,
                    coefficients,
                    ops.stop_gradient(upstream),
                    epsilon,
                    limit,
                    output_bound,
                )
            )
            max_logs = residuals[1]
            grad_values = element_gradients(
                values, mask, max_logs, inner, grad_sums, epsilon, budget
            )
            return grad_values, grad_exponents, grad_inner, grad_coefficients

        return outputs, grad

    exponents = ops.cast(exponents, "float32")
    _, inner = formula.outer_and_inner(exponents)
    return padded_laf(
        ops.cast(values, "float32"),
        exponents,
        inner,
        ops.cast(coefficients, "float32"),
    )


def bucket_size(set_size):
    """The set size rounded up to a multiple of an eighth of the next power
    of 2 (at least 1): exact up to 8, then four sizes per doubling (9 ->
    10, 100 -> 112, 129 -> 160).

    XLA compiles `padded_laf_kernels` once per input shape: padding the set
    axis to these sizes bounds the number of shapes to four per doubling of
    the set size, for at most a quarter more work. The padding happens
    here, inside the op, because the set size of a batch is often decided
    inside the model (ragged sets are padded by the layer itself, batch by
    batch), where no data pipeline can reach it.

    Args:
        set_size: a Python int, or a scalar int tensor when the size is
            known only at run time.

    Returns:
        A Python int for an int, else an int32 scalar tensor: a size known
        when tracing stays known, and so do the shapes computed from it.
    """
    if isinstance(set_size, int):
        power = 2 ** max(set_size - 1, 0).bit_length()
        step = max(power // 8, 1)
        return max(-(-set_size // step) * step, 1)
    set_size = ops.cast(ops.maximum(set_size, 1), "float64")
    power = 2.0 ** ops.ceil(ops.log2(set_size) - 1e-9)
    step = ops.maximum(power / 8.0, 1.0)
    return ops.cast(ops.ceil(set_size / step) * step, "int32")


def laf_over_sets(values, sets, exponents, coefficients, *args):
    if isinstance(sets, SegmentSets):
        return formula.laf_math(values, sets, exponents, coefficients, *args)
    set_size = power_sums.shape(values)[1]
    padding = bucket_size(set_size) - set_size
    values = ops.pad(values, [[0, 0], [0, padding], [0, 0]])
    mask = ops.pad(sets.mask, [[0, 0], [0, padding]])
    return compiled_padded_laf(values, mask, exponents, coefficients, *args)
