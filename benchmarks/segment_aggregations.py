"""One training step of an aggregation over flat elements with segment ids.

The graph form of the sets (`keras_laf.core.sets`, form 3): 512 sets of 20 to
200 elements, 64 features drawn uniformly in [0, 1], the elements flat
`(num_elements, 64)` with sorted segment ids. One step is the forward
pass and the gradient of the sum of the outputs with respect to the
elements and the layer's weights: compiled whole with `jax.jit` on JAX,
eager with `backward()` on PyTorch.

Steps (`--steps`):

- `softmax`: `SoftmaxAggregation(learn=True, channels=64)`;
- `mean_max_std`: `MultiAggregation(["mean", "max", "std"])`;
- `power_mean`: `PowerMeanAggregation(learn=True, channels=64)`, the
  peers' learnable aggregation closest to LAF (no peer has LAF);
- `laf`: `LAF(4)` over the segments;
- `laf_padded`: `LAF(4)` over the same sets padded to 200 elements with a
  mask (half of the padded tensor is padding);
- `exponentials`: LAF(4)'s exponentials alone, exp(q y) for the 16 inner
  exponents of each element and feature, summed over the elements,
  forward only (compiled on JAX): the least work any LAF step does.

The peers, optional and imported only if present: k3-node 1.0.0 (the
Keras 3 port of PyTorch Geometric's aggregations, on JAX and PyTorch) and
PyTorch Geometric 2.8.1 (on the PyTorch backend). Install them apart from
the package and put them on the path:

    pip install --no-deps --target /work/peers torch-geometric==2.8.1 \\
        k3-node==1.0.0 xxhash aiohttp requests
    PYTHONPATH=/work/peers KERAS_BACKEND=jax \\
        python -m benchmarks.segment_aggregations --output r.json

Every step runs `--repeats` times per round, the steps in turn, over
`--rounds` rounds, so that a busy machine slows them alike; each figure
is the lowest of the rounds' medians. The table gives each keras-laf step
against each peer's same step, LAF over segments against LAF padded and
against its exponentials, all from this run. The record also holds the
load average before and after, to tell whether other processes ran.
"""

import argparse
import os
import platform
import sys
import time

import keras
import numpy as np

import keras_laf
from benchmarks.common import write_record

STEPS = (
    "softmax",
    "mean_max_std",
    "power_mean",
    "laf",
    "laf_padded",
    "exponentials",
)
IMPLEMENTATIONS = ("keras-laf", "k3-node", "pyg")
# The comparisons of the table: (step, implementation) over (step,
# implementation), both from this run.
RATIOS = [
    (("softmax", "keras-laf"), ("softmax", "k3-node")),
    (("softmax", "keras-laf"), ("softmax", "pyg")),
    (("mean_max_std", "keras-laf"), ("mean_max_std", "k3-node")),
    (("mean_max_std", "keras-laf"), ("mean_max_std", "pyg")),
    (("power_mean", "keras-laf"), ("power_mean", "k3-node")),
    (("power_mean", "keras-laf"), ("power_mean", "pyg")),
    (("laf", "keras-laf"), ("laf_padded", "keras-laf")),
    (("laf", "keras-laf"), ("exponentials", "keras-laf")),
    (("laf_padded", "keras-laf"), ("exponentials", "keras-laf")),
    (("laf", "keras-laf"), ("power_mean", "k3-node")),
]
LAF_UNITS = 4


def make_sets(num_sets, smallest, largest, features, seed=0):
    """Flat elements, their sorted segment ids and the padded sets."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(smallest, largest + 1, num_sets)
    values = rng.uniform(0, 1, (int(sizes.sum()), features))
    values = values.astype("float32")
    segment_ids = np.repeat(np.arange(num_sets), sizes).astype("int32")
    padded = np.zeros((num_sets, largest, features), "float32")
    mask = np.arange(largest)[None, :] < sizes[:, None]
    padded[mask] = values
    return {
        "values": values,
        "segment_ids": segment_ids,
        "num_segments": num_sets,
        "padded": padded,
        "mask": mask,
    }


def keras_laf_layer(step, features):
    """The keras-laf layer of `step`, and whether it takes padded sets."""
    if step == "softmax":
        layer = keras_laf.SoftmaxAggregation(learn=True, channels=features)
    elif step == "power_mean":
        layer = keras_laf.PowerMeanAggregation(learn=True, channels=features)
    elif step == "mean_max_std":
        layer = keras_laf.MultiAggregation(["mean", "max", "std"])
    else:
        layer = keras_laf.LAF(LAF_UNITS)
    return layer, step == "laf_padded"


def k3_node_layer(step, features):
    from k3_node.layers import aggr

    if step == "softmax":
        return aggr.SoftmaxAggregation(learn=True, channels=features)
    if step == "power_mean":
        return aggr.PowerMeanAggregation(learn=True, channels=features)
    if step == "mean_max_std":
        return aggr.MultiAggregation(["mean", "max", "std"])
    return None


def pyg_module(step, features):
    from torch_geometric.nn import aggr

    if step == "softmax":
        return aggr.SoftmaxAggregation(learn=True, channels=features)
    if step == "power_mean":
        return aggr.PowerMeanAggregation(learn=True, channels=features)
    if step == "mean_max_std":
        return aggr.MultiAggregation(["mean", "max", "std"])
    return None


def keras_step(layer, inputs, kwargs, tensor_kwargs):
    """A step of a Keras layer: `layer(inputs, **kwargs, **tensor_kwargs)`,
    summed, differentiated by the inputs and the weights. Returns a
    function that runs one step and waits for it."""
    backend = keras.config.backend()
    layer(inputs, **kwargs, **tensor_kwargs)
    if backend == "jax":
        import jax

        trainable = [v.value for v in layer.trainable_variables]
        non_trainable = [v.value for v in layer.non_trainable_variables]

        def loss(inputs, trainable, tensors):
            outputs = layer.stateless_call(
                trainable, non_trainable, inputs, **kwargs, **tensors
            )[0]
            return outputs.sum()

        gradient = jax.jit(jax.grad(loss, argnums=(0, 1)))
        inputs = jax.numpy.asarray(inputs)
        tensors = {
            name: jax.numpy.asarray(value)
            for name, value in tensor_kwargs.items()
        }
        return lambda: jax.block_until_ready(
            gradient(inputs, trainable, tensors)
        )
    if backend == "torch":
        import torch

        inputs = torch.tensor(inputs, requires_grad=True)
        tensors = {
            name: torch.as_tensor(value)
            for name, value in tensor_kwargs.items()
        }
        weights = [v.value for v in layer.trainable_variables]

        def step():
            for tensor in (inputs, *weights):
                tensor.grad = None
            layer(inputs, **kwargs, **tensors).sum().backward()

        return step
    raise ValueError(
        "This benchmark runs on the JAX and PyTorch backends. Received: "
        f"KERAS_BACKEND={backend}"
    )


def pyg_step(module, values, segment_ids, num_segments):
    import torch

    inputs = torch.tensor(values, requires_grad=True)
    index = torch.as_tensor(segment_ids, dtype=torch.long)
    weights = list(module.parameters())

    def step():
        for tensor in (inputs, *weights):
            tensor.grad = None
        module(inputs, index=index, dim_size=num_segments).sum().backward()

    return step


def exponentials_step(values):
    """LAF's exponentials alone: exp(q y) for y = log x and log(1 - x),
    each element, feature and inner exponent, summed over the elements."""
    from keras import ops

    rng = np.random.default_rng(1)
    # (elements, features, 2, 1): the logs of both sources.
    y = np.log(np.clip(np.stack([values, 1 - values], -1), 1e-7, 1))[..., None]
    q = rng.uniform(0, 2, (2, 2 * LAF_UNITS)).astype("float32")

    def one_pass(y, q):
        return ops.sum(ops.exp(y * q), axis=0)

    if keras.config.backend() == "jax":
        import jax

        compiled = jax.jit(one_pass)
        y, q = jax.numpy.asarray(y), jax.numpy.asarray(q)
        return lambda: jax.block_until_ready(compiled(y, q))
    y, q = ops.convert_to_tensor(y), ops.convert_to_tensor(q)
    return lambda: ops.convert_to_numpy(one_pass(y, q))


def available_peers():
    found = []
    for implementation, module in (
        ("k3-node", "k3_node"),
        ("pyg", "torch_geometric"),
    ):
        if implementation == "pyg" and keras.config.backend() != "torch":
            continue
        try:
            __import__(module)
        except ImportError:
            continue
        found.append(implementation)
    return found


def build_steps(steps, peers, data):
    """`{(step, implementation): function running one step}`."""
    features = data["values"].shape[1]
    segment = {"num_segments": data["num_segments"]}
    built = {}
    for step in steps:
        if step == "exponentials":
            built[step, "keras-laf"] = exponentials_step(data["values"])
            continue
        layer, padded = keras_laf_layer(step, features)
        if padded:
            built[step, "keras-laf"] = keras_step(
                layer, data["padded"], {}, {"mask": data["mask"]}
            )
        else:
            built[step, "keras-laf"] = keras_step(
                layer,
                data["values"],
                segment,
                {"segment_ids": data["segment_ids"]},
            )
        if "k3-node" in peers:
            peer = k3_node_layer(step, features)
            if peer is not None:
                built[step, "k3-node"] = keras_step(
                    peer,
                    data["values"],
                    {"dim_size": data["num_segments"]},
                    {"index": data["segment_ids"]},
                )
        if "pyg" in peers:
            module = pyg_module(step, features)
            if module is not None:
                built[step, "pyg"] = pyg_step(
                    module,
                    data["values"],
                    data["segment_ids"],
                    data["num_segments"],
                )
    return built


def run(args):
    data = make_sets(args.num_sets, args.smallest, args.largest, args.features)
    peers = [] if args.no_peers else available_peers()
    load_before = os.getloadavg()
    built = build_steps(args.steps, peers, data)
    for function in built.values():
        # Compiles, and warms the caches.
        function()
        function()
    medians = {key: [] for key in built}
    for round_index in range(args.rounds):
        for key, function in built.items():
            times = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                function()
                times.append(time.perf_counter() - start)
            medians[key].append(float(np.median(times)))
        print(f"round {round_index + 1} of {args.rounds} done", flush=True)
    best = {key: min(values) for key, values in medians.items()}
    ratios = [
        {
            "step": f"{a[0]} ({a[1]})",
            "against": f"{b[0]} ({b[1]})",
            "ratio": best[a] / best[b],
        }
        for a, b in RATIOS
        if a in best and b in best
    ]
    return {
        "benchmark": "segment_aggregations",
        "backend": keras.config.backend(),
        "keras": keras.__version__,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        "python": platform.python_version(),
        "peers": peers,
        "workload": {
            "num_sets": args.num_sets,
            "set_sizes": [args.smallest, args.largest],
            "num_elements": int(data["values"].shape[0]),
            "features": args.features,
            "laf_units": LAF_UNITS,
        },
        "rounds": args.rounds,
        "repeats": args.repeats,
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "milliseconds": [
            {
                "step": step,
                "implementation": implementation,
                "lowest_median": 1e3 * best[step, implementation],
                "round_medians": [
                    1e3 * value for value in medians[step, implementation]
                ],
            }
            for step, implementation in built
        ],
        "ratios": ratios,
    }


def print_table(record):
    print(
        f"\n{record['backend']}, {record['workload']['num_elements']} "
        f"elements in {record['workload']['num_sets']} sets, load "
        f"{record['load_average_before'][0]:.2f} -> "
        f"{record['load_average_after'][0]:.2f}"
    )
    print(f"{'step':<16}{'implementation':<16}{'ms':>10}")
    for row in record["milliseconds"]:
        print(
            f"{row['step']:<16}{row['implementation']:<16}"
            f"{row['lowest_median']:>10.2f}"
        )
    print(f"\n{'step':<28}{'against':<28}{'ratio':>8}")
    for row in record["ratios"]:
        print(f"{row['step']:<28}{row['against']:<28}{row['ratio']:>8.2f}")


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="KERAS_BACKEND=jax or torch chooses the backend; peers are "
        "used where importable (PYTHONPATH=/work/peers).",
    )
    parser.add_argument(
        "--steps",
        type=lambda text: text.split(","),
        default=list(STEPS),
        help=f"comma-separated steps among {','.join(STEPS)} (all)",
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--repeats", type=int, default=5, help="steps timed per round (5)"
    )
    parser.add_argument("--num-sets", type=int, default=512)
    parser.add_argument("--smallest", type=int, default=20)
    parser.add_argument("--largest", type=int, default=200)
    parser.add_argument("--features", type=int, default=64)
    parser.add_argument(
        "--no-peers", action="store_true", help="keras-laf alone"
    )
    parser.add_argument("--output", help="write the record as JSON here")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.steps) - set(STEPS))
    if unknown:
        parser.error(f"unknown steps {unknown}; choose among {list(STEPS)}")
    record = run(args)
    print_table(record)
    write_record(args.output, record)


if __name__ == "__main__":
    sys.exit(main())
