"""`keras-laf pointcloud`: point-cloud classification with five poolings.

The point-cloud experiment of the LAF paper: the DeepSets classifier of
ModelNet40 (permutation-equivariant layers, a pooling over the points,
dense layers) with max or sum pooling (DeepSets), PNA's pooling, an LSTM
or LAF, trained
with the cross-entropy of the logits, and compared by test accuracy over
several seeds, for clouds of 100 and 1000 points.

ModelNet40 is read from its HDF5 files (`--data-dir`, see
`laf_experiments.data.load_modelnet40`); without `--data-dir` the clouds are
sampled from the surfaces of eight simple solids instead, which needs no
download.
"""

import pathlib

import numpy as np

from laf_experiments import methods
from laf_experiments import plots
from laf_experiments import reports
from laf_experiments import runner
from laf_experiments.data import SOLID_NAMES
from laf_experiments.data.constants import MODELNET40_HELP
from laf_experiments.errors import ExperimentError
from laf_experiments.errors import log
from laf_experiments.runner import cached
from laf_experiments.settings import OPTIMIZER_DEFAULTS
from laf_experiments.settings import PREDICT_BATCH_SIZE
from laf_experiments.settings import VALIDATION_SEED
from laf_experiments.settings import add_common_arguments
from laf_experiments.settings import choice_list
from laf_experiments.settings import positive_int
from laf_experiments.settings import positive_int_list
from laf_experiments.settings import resolve_settings
from laf_experiments.store import open_store

# The table of methods: names of `laf_experiments.methods`. DeepSets'
# point-cloud model pools with the maximum; the learnable poolings of
# `keras_laf.aggregations` and LAF beside the maximum run only when named.
METHODS = ("deepsets", "deepsets_sum", "pna", "lstm", "laf")
OPTIONAL_METHODS = (
    "gru",
    "softmax",
    "powermean",
    "attention",
    "set2set",
    "gmt",
    "laf+max",
)
POOLINGS = {
    **{name: methods.METHODS[name] for name in METHODS + OPTIONAL_METHODS},
    "deepsets": methods.method("deepsets", aggregation="max"),
    "pna": methods.NEIGHBOURHOOD_PNA,
}
KEY_FIELDS = ("method", "num_points", "seed")
TABLE = "accuracy.md"
PLOT = "accuracy.png"
# Seeds of the data: generated training clouds use the run's seed,
# validation clouds `VALIDATION_SEED + seed`, test clouds
# `TEST_SEED`; the ModelNet40 validation clouds are a fixed random part of
# its train split.
TEST_SEED = 20_000

DEFAULTS = {
    "train_size": 800,
    "val_size": 200,
    "test_size": 400,
    "epochs": 10,
    "seeds": 2,
    "num_points": (100,),
    "width": 64,
}
QUICK = {
    "train_size": 64,
    "val_size": 32,
    "test_size": 32,
    "epochs": 1,
    "seeds": 1,
    "num_points": (32,),
    "width": 32,
}
# With --data-dir, unless given: all of the train split but a validation
# part, and all of the test split.
MODELNET40_DEFAULTS = {
    **DEFAULTS,
    "train_size": None,
    "val_size": 984,
    "test_size": None,
    "width": 256,
}

HELP = "point clouds: max, sum, PNA, LSTM and LAF pooling (ModelNet40, solids)"
DESCRIPTION = f"""\
Classifies point clouds with the DeepSets classifier and five poolings:
deepsets (max pooling), deepsets_sum (sum pooling), pna (max, min, mean,
std), lstm (an LSTM over the points, as wide as the layers) and laf (a
sigmoid and LAF with 10 units); three permutation-equivariant tanh
layers of --width units, the pooling, dropout, a dense tanh layer,
dropout, logits. Trained with Adam, the sparse categorical cross-entropy
of the logits and a learning-rate decay on validation plateaus; reports
the test accuracy, mean and standard deviation over the seeds, as a table
(accuracy.md) and a plot of each pooling's accuracy per seed (accuracy.png).

Data: with --data-dir, ModelNet40's modelnet40_ply_hdf5_2048 directory,
by default all of its train split but {MODELNET40_DEFAULTS["val_size"]} \
validation clouds, all of
its test split and the paper's width of {MODELNET40_DEFAULTS["width"]}. \
Without --data-dir,
clouds sampled from {len(SOLID_NAMES)} simple solids with random scales \
and rotations,
generated offline.

The default run (solids, {DEFAULTS["train_size"]} training clouds of \
{DEFAULTS["num_points"][0]} points, width {DEFAULTS["width"]},
{DEFAULTS["epochs"]} epochs, {DEFAULTS["seeds"]} seeds) takes a few \
minutes on two CPU cores, the LSTM
being the slowest; it is a small-scale run, not the paper's result. The
paper's scale:

  keras-laf pointcloud --data-dir modelnet40_ply_hdf5_2048 \\
      --num-points 100,1000 --epochs 100 --seeds 5
"""


def add_arguments(parser):
    """Adds the arguments of `keras-laf pointcloud`."""
    group = parser.add_argument_group("experiment")
    group.add_argument(
        "--data-dir",
        metavar="DIR",
        help="ModelNet40's modelnet40_ply_hdf5_2048 directory; without it "
        "the clouds are generated from simple solids (no download)",
    )
    group.add_argument(
        "--num-points",
        type=positive_int_list,
        metavar="N1,N2,...",
        help="points per cloud (default: "
        f"{','.join(map(str, DEFAULTS['num_points']))}; --quick: "
        f"{','.join(map(str, QUICK['num_points']))}; paper: 100,1000)",
    )
    group.add_argument(
        "--methods",
        type=choice_list((*METHODS, *OPTIONAL_METHODS), "method"),
        default=METHODS,
        help="comma-separated methods: deepsets (max pooling), "
        "deepsets_sum (sum pooling), pna, lstm, laf "
        f"(default: {','.join(METHODS)}); also the learnable poolings "
        f"{','.join(OPTIONAL_METHODS)}",
    )
    group.add_argument(
        "--width",
        type=positive_int,
        metavar="N",
        help="units of the equivariant and dense layers (default: "
        f"{DEFAULTS['width']}, with --data-dir "
        f"{MODELNET40_DEFAULTS['width']}; --quick: {QUICK['width']})",
    )
    add_common_arguments(parser, "pointcloud", DEFAULTS, QUICK)


def build_model(method, num_classes, width=256, laf_preset=None):
    """The DeepSets point-cloud classifier with the method's pooling."""
    from keras_laf.models import point_cloud_classifier
    from keras_laf.models.building_blocks import with_laf_arguments

    pooling, aggregation_kwargs = POOLINGS[method].spec()
    # The paper's LAF of 10 units; the recurrent poolings and GMT as wide
    # as the classifier.
    width_argument = {"lstm": "units", "gru": "units", "gmt": "dim"}
    if pooling in width_argument:
        aggregation_kwargs = {
            width_argument[pooling]: width,
            **aggregation_kwargs,
        }
    return point_cloud_classifier(
        num_classes=num_classes,
        aggregation=pooling,
        aggregation_kwargs=with_laf_arguments(
            pooling, aggregation_kwargs, units=10, preset=laf_preset
        ),
        hidden_units=width,
        ragged=False,
        name=f"point_cloud_{method}",
    )


def classification_records(runs):
    """One record per run: its test accuracy."""
    return [
        {field: run[field] for field in (*KEY_FIELDS, "accuracy")}
        for run in runs
    ]


def _to_model_inputs(clouds, batch_size, shuffle=False, seed=None):
    # ((points, mask), labels): every point of a cloud is real.
    import tensorflow as tf

    dataset = clouds.to_dataset(batch_size, shuffle=shuffle, seed=seed)
    return dataset.map(
        lambda points, labels: (
            (points, tf.ones(tf.shape(points)[:2], dtype="bool")),
            labels,
        )
    )


def _subset(clouds, indices):
    return type(clouds)(
        points=clouds.points[indices],
        labels=clouds.labels[indices],
        class_names=clouds.class_names,
    )


class _ModelNet40:
    # ModelNet40 at one number of points: train, validation and test parts.

    def __init__(self, directory, num_points, args):
        from laf_experiments.data import load_modelnet40

        try:
            train = load_modelnet40(directory, "train", num_points)
            test = load_modelnet40(directory, "test", num_points)
        except (OSError, ValueError) as error:
            raise ExperimentError(str(error)) from None
        if args.val_size >= len(train.labels):
            raise ExperimentError(
                f"--val-size {args.val_size} leaves no training clouds: the "
                f"train split of {directory} has {len(train.labels)}."
            )
        order = np.random.default_rng(VALIDATION_SEED).permutation(
            len(train.labels)
        )
        self.validation = _subset(train, order[: args.val_size])
        self.train = _subset(train, order[args.val_size :][: args.train_size])
        self.test = _subset(test, np.arange(len(test.labels))[: args.test_size])
        self.num_classes = len(train.class_names)

    def training_data(self, seed):
        return self.train, self.validation


class _Solids:
    # Generated clouds at one number of points.

    def __init__(self, num_points, args):
        self.num_points = num_points
        self.args = args
        self.test = self._make(args.test_size, num_points, seed=TEST_SEED)
        self.num_classes = len(SOLID_NAMES)

    @staticmethod
    def _make(num_clouds, num_points, seed):
        from laf_experiments.data import make_solid_point_clouds

        return make_solid_point_clouds(num_clouds, num_points, seed=seed)

    def training_data(self, seed):
        train = self._make(self.args.train_size, self.num_points, seed=seed)
        validation = self._make(
            self.args.val_size,
            self.num_points,
            seed=VALIDATION_SEED + seed,
        )
        return train, validation


def run(args):
    """Runs `keras-laf pointcloud`."""
    import keras

    experiment = args.experiment
    if args.data_dir is not None:
        directory = pathlib.Path(args.data_dir).expanduser()
        if not directory.is_dir():
            raise ExperimentError(
                f"ModelNet40 directory not found: {args.data_dir!r}. "
                f"{MODELNET40_HELP} Or leave out --data-dir to use "
                "generated clouds of simple solids."
            )
        if not args.quick:
            args.setting_defaults = {
                **MODELNET40_DEFAULTS,
                **OPTIMIZER_DEFAULTS,
            }
    settings = resolve_settings(args, extra_names=("num_points", "width"))
    del settings["num_points"]
    if args.data_dir is None:
        settings["data"] = "solids"
        log(
            experiment,
            "no --data-dir given: using point clouds generated offline "
            f"from {len(SOLID_NAMES)} simple solids instead of ModelNet40",
        )
    else:
        settings["data"] = f"modelnet40:{directory.resolve()}"
    store = open_store(
        args,
        settings,
        KEY_FIELDS,
        classification_records,
        group_fields=("method", "num_points"),
        value_field="accuracy",
    )
    data_by_points = cached(
        lambda key: (
            _Solids(key["num_points"], args)
            if args.data_dir is None
            else _ModelNet40(directory, key["num_points"], args)
        ),
        lambda key: key["num_points"],
    )

    def make_training_data(key):
        train, validation = data_by_points(key).training_data(key["seed"])
        return (
            _to_model_inputs(
                train, args.batch_size, shuffle=True, seed=key["seed"]
            ),
            _to_model_inputs(validation, args.batch_size),
        )

    def evaluate(key, model):
        data = data_by_points(key)
        logits = model.predict(
            _to_model_inputs(data.test, PREDICT_BATCH_SIZE), verbose=0
        )
        accuracy = float(
            np.mean(np.argmax(logits, axis=-1) == data.test.labels)
        )
        results = {
            "accuracy": accuracy,
            "num_classes": data.num_classes,
            "num_test_clouds": len(data.test.labels),
        }
        return results, f"test accuracy {accuracy:.4f}"

    runner.run_all(
        args,
        store,
        keys=[
            {"method": method, "num_points": num_points, "seed": seed}
            for num_points in args.num_points
            for seed in args.seeds
            for method in args.methods
        ],
        describe=lambda key: (
            f"{key['method']} on {key['num_points']} points, seed {key['seed']}"
        ),
        train=runner.fitting(
            args,
            settings,
            training_data=cached(
                make_training_data,
                lambda key: (key["num_points"], key["seed"]),
            ),
            build_model=lambda key: build_model(
                key["method"],
                data_by_points(key).num_classes,
                args.width,
                laf_preset=args.laf_preset,
            ),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["accuracy"],
        ),
        evaluate=evaluate,
    )
    data = "ModelNet40" if args.data_dir else "generated solids"
    reports.write_results(
        args,
        store,
        table=(
            TABLE,
            lambda: reports.accuracy_table(
                store.summary, f"Point-cloud classification; data: {data}"
            ),
        ),
        figure=(
            PLOT,
            lambda: plots.accuracy_figure(
                store.records,
                f"Test accuracy per pooling, each seed a marker; {data}",
                chance=1 / store.runs[0]["num_classes"],
            ),
        ),
    )
