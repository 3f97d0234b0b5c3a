"""Every pooling of keras-laf, old and new, on point clouds and integers.

Reads the records that the commands in RESULTS.md ("Every pooling: point
clouds and the integer targets") write and prints one Markdown table:
for each pooling, the point-cloud classifier's test accuracy, the
integer model's MAE at 50 digits on six targets (mean ± standard
deviation over seeds 0, 1, 2), and the seconds per training epoch of both
models against max pooling's (`benchmarks/pooling_cost.py`); with
`--output`, the same figures as JSON.

    python -m benchmarks.poolings_table

Point-cloud and integer records of the LAF presets, max, sum, PNA, LSTM
and DeepSets come from `results/presets/` and the seed study when the new
records lack them (same settings, same seeds).
"""

import argparse
import collections
import json
import pathlib
import sys

from benchmarks.common import RESULTS
from benchmarks.common import mean_std
from benchmarks.common import read_jsonl
from benchmarks.common import write_record
from laf_experiments.reports import markdown_table

TARGETS = ("sum", "count", "mean", "max", "min", "kurtosis")
# Row label -> the name in the point-cloud and the integer records.
POOLINGS = {
    "max": ("max", "max"),
    "sum": ("sum", "sum"),
    "mean": (None, "mean"),
    # PNA's neighbourhood aggregators on point clouds; the LAF paper's PNA
    # set (mean, max, sum, std, var, skewness, kurtosis) on integers.
    "PNA": ("pna_neighbourhood", "pna"),
    "DeepSets (3 sums, 3 max, 3 means)": (None, "deepsets"),
    "LSTM": ("lstm", "lstm"),
    "LAF, `pooling` (default)": ("laf:pooling", "pooling"),
    "LAF, `closed_forms`": ("laf:closed_forms", "closed_forms"),
    "LAF, `closed_forms` before its count anchor": (
        "laf:closed_forms_no_count_anchor",
        "degree_floor_0.25",
    ),
    "softmax": ("softmax", "softmax"),
    "power mean": ("powermean", "powermean"),
    "attentional": ("attention", "attention"),
    "GRU": ("gru", "gru"),
    "Set2Set": ("set2set", "set2set"),
    "GMT": ("gmt", "gmt"),
    "LAF + max (`MultiAggregation`)": ("laf+max", "laf+max"),
}
# The cost benchmark times LAF with the default preset as `laf`; the
# presets differ in their start and constraints, not in the layer's work.
COST_NAMES = {
    "laf:pooling": "laf",
    "pooling": "laf",
    "laf:closed_forms": "laf",
    "closed_forms": "laf",
    "laf:closed_forms_no_count_anchor": "laf",
    "degree_floor_0.25": "laf",
}


def first_per_seed(records, key, value, keep=lambda record: True):
    """`{name: {seed: value}}`, the first record of each (name, seed)."""
    groups = collections.defaultdict(dict)
    for record in records:
        if keep(record):
            groups[record[key]].setdefault(record["seed"], record[value])
    return groups


def integer_record(record):
    return (
        record.get("test_protocol") == "authors"
        and record.get("pipeline", "arrays") == "arrays"
        and record.get("snap_fine_tune_epochs") is None
        and (record["train_size"], record["epochs"]) == (20_000, 15)
    )


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "--output", type=pathlib.Path, help="write the rows as JSON here"
    )
    args = parser.parse_args(argv)
    clouds = first_per_seed(
        read_jsonl(RESULTS / "aggregations" / "point_cloud_pooling.jsonl")
        + read_jsonl(RESULTS / "presets" / "point_cloud_pooling.jsonl"),
        "pooling",
        "test_accuracy",
    )
    integers = {
        target: first_per_seed(
            read_jsonl(RESULTS / "aggregations" / "integer_targets.jsonl")
            + read_jsonl(RESULTS / "presets" / "integer_targets.jsonl")
            + read_jsonl(RESULTS / "laf-initialization" / "exact_forms.jsonl"),
            "initialization",
            "test_mae",
            lambda record, target=target: (
                record["target"] == target and integer_record(record)
            ),
        )
        for target in TARGETS
    }
    cost_path = RESULTS / "aggregations" / "pooling_cost.json"
    cost = (
        json.loads(cost_path.read_text())["tasks"] if cost_path.exists() else {}
    )

    def ratio(task, name):
        row = cost.get(task, {}).get(COST_NAMES.get(name, name))
        return "–" if row is None else f"{row['ratio_to_max']:.1f}"

    def cell(seeds):
        values = [seeds[seed] for seed in (0, 1, 2) if seed in seeds]
        if not values:
            return "–", values
        text = mean_std(values)
        if len(values) < 3:
            text = f"{values[0]:.3g} (seed 0)" if len(values) == 1 else text
        return text, values

    rows, data = [], []
    for label, (cloud_name, integer_name) in POOLINGS.items():
        accuracy, accuracies = cell(clouds.get(cloud_name, {}))
        maes = [
            cell(integers[target].get(integer_name, {})) for target in TARGETS
        ]
        rows.append(
            [
                label,
                accuracy,
                ratio("point_clouds", cloud_name),
                *(text for text, _ in maes),
                ratio("integers", integer_name),
            ]
        )
        data.append(
            {
                "pooling": label,
                "point_cloud_accuracy": accuracies,
                **{
                    f"{target}_mae": values
                    for target, (_, values) in zip(TARGETS, maes)
                },
            }
        )
    header = [
        "pooling",
        "point clouds, accuracy",
        "× max, s per epoch",
        *(f"{target}, MAE" for target in TARGETS),
        "× max, s per epoch",
    ]
    print(markdown_table(header, rows))
    write_record(args.output, {"poolings": data})
    return 0


if __name__ == "__main__":
    sys.exit(main())
