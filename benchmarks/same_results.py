"""Whether two versions of keras-laf compute the same LAF, bit for bit.

A change meant only to make LAF faster or smaller should leave its
outputs and gradients as they were; then training takes the same path
from the same seed, and no seed study is needed to show that nothing else
moved. This script computes `keras_laf.laf` and its gradients with
respect to the values, exponents and coefficients, on the running Keras
backend, on padded sets with masks (sets of every size from empty to
full, an inner exponent of 0 in every unit) in the point-cloud pooling's
shapes, the integer model's and long sets, and writes them to an `.npz`
file; given `--against` another such file, it compares each array and
prints whether it is identical, else its largest difference relative to
the array's largest magnitude. Exits with status 1 where any differs.

    # the version before a change (--package-path: a checkout of it),
    # then this one, compared with it:
    git worktree add /tmp/before <commit>
    python -m benchmarks.same_results --package-path /tmp/before \\
        --output a.npz
    python -m benchmarks.same_results --against a.npz
    KERAS_BACKEND=jax python -m benchmarks.same_results ...
"""

import argparse
import pathlib
import sys

import keras
import numpy as np
from keras import ops

# sets, elements per set, features, LAF units
SHAPES = {
    "point_clouds": (32, 100, 64, 10),
    "integers": (64, 10, 10, 9),
    "long_sets": (4, 3000, 8, 9),
}


def laf_and_gradients(values, mask, exponents, coefficients):
    """LAF's outputs and the gradients of a weighted sum of them with
    respect to the values, exponents and coefficients."""
    import keras_laf

    units = exponents.shape[1]
    # Weights that differ per output, so that every output's gradient
    # counts.
    weights = np.cos(np.arange(values.shape[2] * units)).astype("float32")
    weights = ops.convert_to_tensor(weights.reshape(values.shape[2], units))

    def loss(values, exponents, coefficients):
        outputs = keras_laf.laf(values, exponents, coefficients, mask=mask)
        return ops.sum(outputs * weights)

    arguments = (values, exponents, coefficients)
    outputs = keras_laf.laf(values, exponents, coefficients, mask=mask)
    if keras.config.backend() == "jax":
        import jax

        gradients = jax.grad(loss, argnums=(0, 1, 2))(*arguments)
    elif keras.config.backend() == "tensorflow":
        import tensorflow as tf

        arguments = [tf.constant(argument) for argument in arguments]
        with tf.GradientTape() as tape:
            tape.watch(arguments)
            total = loss(*arguments)
        gradients = tape.gradient(total, arguments)
    else:
        import torch

        arguments = [
            torch.tensor(argument, requires_grad=True) for argument in arguments
        ]
        loss(*arguments).backward()
        gradients = [argument.grad for argument in arguments]
    return [ops.convert_to_numpy(outputs)] + [
        ops.convert_to_numpy(gradient) for gradient in gradients
    ]


def results():
    rng = np.random.default_rng(3)
    arrays = {}
    for name, (num_sets, set_size, features, units) in SHAPES.items():
        values = rng.uniform(0, 1, (num_sets, set_size, features))
        sizes = rng.integers(0, set_size + 1, (num_sets, 1))
        sizes[:2, 0] = (0, set_size)  # an empty set and a full one
        mask = np.arange(set_size) < sizes
        values = (values * mask[..., None]).astype("float32")
        exponents = rng.uniform(0, 2, (8, units)).astype("float32")
        exponents[1::2, 0] = 0.0  # one unit's inner exponents all 0
        coefficients = rng.normal(0, 1, (4, units)).astype("float32")
        for what, array in zip(
            (
                "outputs",
                "values_gradient",
                "exponents_gradient",
                "coefficients_gradient",
            ),
            laf_and_gradients(values, mask, exponents, coefficients),
        ):
            arrays[f"{name}/{what}"] = array
    return arrays


def differences(arrays, reference):
    """For each array: None where identical (NaN equal to NaN), inf where
    one side lacks it or the shapes differ, else its largest difference
    relative to the reference's largest magnitude."""
    compared = {}
    for name in sorted(set(arrays) | set(reference)):
        array, expected = arrays.get(name), reference.get(name)
        if array is None or expected is None or array.shape != expected.shape:
            compared[name] = float("inf")
        elif np.array_equal(array, expected, equal_nan=True):
            compared[name] = None
        else:
            scale = np.nanmax(np.abs(expected), initial=0.0)
            scale = max(float(scale), 1e-30)
            compared[name] = float(np.nanmax(np.abs(array - expected))) / scale
    return compared


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=pathlib.Path)
    parser.add_argument("--against", type=pathlib.Path)
    parser.add_argument(
        "--package-path",
        type=pathlib.Path,
        help="import keras_laf from this directory (another version)",
    )
    args = parser.parse_args()
    if args.against is not None and not args.against.is_file():
        parser.error(f"--against: no such file {args.against}")
    if args.package_path is not None:
        if not (args.package_path / "keras_laf").is_dir():
            parser.error(f"--package-path: no keras_laf in {args.package_path}")
        # Ahead of the repository, which `python -m` puts first;
        # keras_laf is imported after this.
        sys.path.insert(0, str(args.package_path.resolve()))
    arrays = results()
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        np.savez(args.output, **arrays)
    if args.against is None:
        print(f"{len(arrays)} arrays on {keras.config.backend()}")
        return
    with np.load(args.against) as reference:
        compared = differences(arrays, dict(reference))
    for name, difference in compared.items():
        verdict = (
            "identical"
            if difference is None
            else f"differs: {difference:.3g} of its largest magnitude"
        )
        print(f"{name:>42}: {verdict}")
    differing = [name for name, d in compared.items() if d is not None]
    print(
        f"{len(compared) - len(differing)} of {len(compared)} arrays "
        f"identical on {keras.config.backend()}"
    )
    if differing:
        sys.exit(1)


if __name__ == "__main__":
    main()
