"""The data sets of the LAF paper's experiments: sets of digits and of digit
images labelled by the twelve aggregation targets, unique-digit sets and
the graph-properties benchmark of PNA, as NumPy arrays and `tf.data`
pipelines.

The general pipelines they build on (`ragged_set_dataset`,
`to_padded_batches`, `disjoint_union`), the digit images and the point
clouds (ModelNet40 or generated solids) are in `keras_laf.datasets`, and
handed on here.
"""

import importlib

# The module of every name, imported on first use: the constants need no
# TensorFlow, so the `keras-laf` command parses its arguments without it.
_MODULES = {
    **dict.fromkeys(
        ("TARGETS", "check_target", "target_value", "target_values"),
        "aggregation_targets",
    ),
    **dict.fromkeys(
        (
            "DIGIT_SOURCES",
            "EXTRAPOLATION_SIZES",
            "GRAPH_TASKS",
            "NODE_TASKS",
            "SOLID_NAMES",
            "TEST_MAX_SIZES",
            "TEST_PROTOCOLS",
            "TRAIN_SIZES",
            "UNIQUE_REDUCTIONS",
        ),
        "constants",
    ),
    # The digit images are the library's (`keras_laf.datasets`), so that
    # a tutorial reads them without the experiments.
    **dict.fromkeys(
        ("DigitImages", "load_digit_images"),
        "keras_laf.datasets.digit_images",
    ),
    **dict.fromkeys(
        (
            "IntegerSets",
            "MnistSets",
            "make_test_datasets",
            "make_test_sets",
            "make_test_sets_by_max_size",
            "make_training_sets",
            "make_unique_digit_sets",
            "sample_authors_test_sets",
            "sample_test_sets",
            "sample_training_sets",
        ),
        "digit_sets",
    ),
    **dict.fromkeys(
        (
            "GRAPH_TYPES",
            "GRAPH_TYPE_PROBABILITIES",
            "PropertyGraphs",
            "graph_property_labels",
            "make_graph_property_splits",
            "make_property_graphs",
            "node_property_labels",
            "random_graph",
        ),
        "graph_properties",
    ),
    # So are the point clouds, which users of the library read too.
    **dict.fromkeys(
        (
            "PointClouds",
            "load_modelnet40",
            "make_solid_point_clouds",
            "standardize_point_clouds",
        ),
        "keras_laf.datasets.point_clouds",
    ),
}

__all__ = sorted(_MODULES)


def __getattr__(name):
    if name in _MODULES:
        module_name = _MODULES[name]
        if "." not in module_name:
            module_name = f"{__name__}.{module_name}"
        module = importlib.import_module(module_name)
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return __all__
