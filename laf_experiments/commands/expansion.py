"""`keras-laf expansion`: text-concept set expansion (DeepSets, LAF §4.4).

Given a few words of a concept, rank the whole vocabulary so that the
concept's other words come first (Zaheer et al., "Deep Sets", NeurIPS
2017; Section 4.4 and Table 3 of the LAF paper). Every test set is a
query of `query_size` words and one held-out word of the same concept;
the held-out word's rank among the vocabulary (query words excluded, ties
counted half) gives recall@10, @100 and @1000 (the share of test sets
whose word ranks within k), the mean reciprocal rank (MRR) and the median
rank.

The methods: `keras_laf.models.set_expansion` with a LAF, sum or PNA
aggregation of the query (`laf`, `deepsets`, `pna`), trained with a
binary cross-entropy on held-out words of the query's concept and random
words; and rankings without training (`laf_experiments.word_ranking`,
which also scores the models and ranks the held-out words).

The data are generated offline (`laf_experiments.data.concept_sets`:
topic-mixture word vectors, concepts = topics), or read with `--data`
from a JSON file in the layout assumed for DeepSets' LDA sets.
"""

import argparse

import numpy as np

from laf_experiments import methods
from laf_experiments import plots
from laf_experiments import reports
from laf_experiments import runner
from laf_experiments.errors import ExperimentError
from laf_experiments.errors import log
from laf_experiments.runner import cached
from laf_experiments.settings import PREDICT_BATCH_SIZE
from laf_experiments.settings import VALIDATION_SEED
from laf_experiments.settings import add_common_arguments
from laf_experiments.settings import add_setting_flags
from laf_experiments.settings import choice_list
from laf_experiments.settings import positive_float
from laf_experiments.settings import positive_int
from laf_experiments.settings import resolve_settings
from laf_experiments.store import open_store
from laf_experiments.word_ranking import METRICS
from laf_experiments.word_ranking import UNTRAINED
from laf_experiments.word_ranking import metrics
from laf_experiments.word_ranking import model_scores
from laf_experiments.word_ranking import ranks
from laf_experiments.word_ranking import training_pairs
from laf_experiments.word_ranking import untrained_scores

# The table of methods: the names of `laf_experiments.methods`, the
# trained ones with the aggregation of their `set_expansion` model
# (DeepSets' set expansion sums the query).
TRAINED = {
    "laf": methods.METHODS["laf"],
    "deepsets": methods.method("deepsets", aggregation="sum"),
    "pna": methods.METHODS["pna"],
}
METHODS = (*TRAINED, *UNTRAINED)
KEY_FIELDS = ("method", "seed")
DATA_SEED = 0
PLOT = "metrics.png"
TABLE = "table.md"

DEFAULTS = {
    "train_size": 2000,
    "val_size": 200,
    "test_size": 500,
    "epochs": 10,
    "seeds": 1,
    "laf_units": 9,
    "num_words": 5000,
    "num_concepts": 100,
    "vector_dim": 32,
    "concentration": 1.0,
    "vector_noise": 0.5,
    "query_size": 5,
}
QUICK = {
    **DEFAULTS,
    "train_size": 400,
    "val_size": 50,
    "test_size": 100,
    "epochs": 5,
    "num_words": 1500,
    "num_concepts": 20,
}
KNOBS = (
    ("num_words", "--num-words", "positive_int", "vocabulary size"),
    ("num_concepts", "--num-concepts", "positive_int", "concepts (topics)"),
    ("vector_dim", "--vector-dim", "positive_int", "word-vector width"),
    (
        "concentration",
        "--concentration",
        "positive_float",
        "sum of the Dirichlet parameters of the words' topic mixtures; "
        "larger mixes the concepts (harder)",
    ),
    (
        "vector_noise",
        "--vector-noise",
        "non_negative_float",
        "noise of the word vectors; larger hides the topics (harder)",
    ),
    ("query_size", "--query-size", "positive_int", "words of a query set"),
)

HELP = "text-concept set expansion: LAF, DeepSets, PNA (generated words)"
DESCRIPTION = f"""\
Ranks a vocabulary given a few words of a concept (DeepSets' text-concept
set expansion; LAF paper, Section 4.4). Trains
keras_laf.models.set_expansion (phi 64 sigmoid units on the fixed word
vectors, the query aggregated by LAF, a sum or PNA's aggregators, then an
MLP of the aggregate, the candidate's vector and their product) and
compares it with a random ranking and nearest neighbours on the word
vectors.

Methods: laf, deepsets (sum) and pna, trained; random; w2v_near (the
Euclidean distance to the query's mean vector), nn_max (the largest
cosine similarity to a query word) and nn_sum_con (the sum of the cosine
similarities), untrained stand-ins named after DeepSets' baselines.
Metrics: recall@10, recall@100, recall@1000, MRR and median rank of the
held-out word of every test set among the vocabulary (query words left
out).

Data: a generated benchmark (no download): words with Dirichlet topic
mixtures, concepts = topics, word vectors = topic centres mixed by the
word's topics plus noise, query sets drawn from one topic. --data FILE
reads sets in the layout assumed for DeepSets' LDA files instead (a JSON
object {{"data": {{"train": [[id, ...], ...], "val": ..., "test": ...}}}};
the last id of a set is held out), with --vectors FILE.npy as word
vectors.

Writes results.json, results.csv (method, metric, value, seed),
summary.csv, {TABLE} and {PLOT}. --quick takes about a minute on two
CPU cores, the default run about five.
"""


def non_negative_float(text):
    """Parses a number of at least 0."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or not np.isfinite(value):
        raise argparse.ArgumentTypeError(
            f"expected a number of at least 0, received {text!r}"
        )
    return value


_TYPES = {
    "positive_int": positive_int,
    "positive_float": positive_float,
    "non_negative_float": non_negative_float,
}


def add_arguments(parser):
    """Adds the arguments of `keras-laf expansion`."""
    group = parser.add_argument_group("experiment")
    group.add_argument(
        "--methods",
        type=choice_list(METHODS, "method"),
        default=METHODS,
        help=f"comma-separated methods (default: {','.join(METHODS)})",
    )
    group.add_argument(
        "--laf-units",
        type=positive_int,
        metavar="N",
        help=f"LAF units (default: {DEFAULTS['laf_units']})",
    )
    group.add_argument(
        "--data",
        metavar="FILE",
        help="a JSON file of word sets in the layout assumed for DeepSets' "
        "LDA data, instead of the generated benchmark",
    )
    group.add_argument(
        "--vectors",
        metavar="FILE",
        help="a .npy file of word vectors (num_words, dim) for --data "
        "(default: random vectors that the models learn from)",
    )
    group = parser.add_argument_group("the generated benchmark")
    add_setting_flags(group, KNOBS, _TYPES, DEFAULTS, QUICK)
    add_common_arguments(parser, "expansion", DEFAULTS, QUICK)


def load_data(args):
    """The benchmark of the arguments: the `--data` file or generated."""
    from laf_experiments.data import concept_sets

    if args.data is None:
        return concept_sets.make_concept_benchmark(
            num_words=args.num_words,
            num_concepts=args.num_concepts,
            vector_dim=args.vector_dim,
            concentration=args.concentration,
            vector_noise=args.vector_noise,
            query_size=args.query_size,
            num_sets={
                "train": args.train_size,
                "validation": args.val_size,
                "test": args.test_size,
            },
            seed=DATA_SEED,
        )
    try:
        return concept_sets.load_lda_sets(args.data, args.vectors)
    except (OSError, ValueError) as error:
        raise ExperimentError(
            f"cannot read --data {args.data!r}: {error}"
        ) from None


def expansion_records(runs):
    """One record per run and metric: method, metric, value, seed."""
    return [
        {
            "method": run["method"],
            "metric": metric,
            "value": run["metrics"][metric],
            "seed": run["seed"],
        }
        for run in runs
        for metric in METRICS
    ]


def build_model(method, data, laf_units, laf_preset=None):
    """The `set_expansion` model of a trained method."""
    from keras_laf.models import set_expansion
    from keras_laf.models.building_blocks import with_laf_arguments

    return set_expansion(
        vocabulary_size=data.num_words,
        embeddings=data.vectors,
        # Random starting vectors (no --vectors) are learned.
        train_embeddings=not data.given_vectors,
        aggregation=TRAINED[method].aggregation,
        aggregation_kwargs=with_laf_arguments(
            TRAINED[method].aggregation, units=laf_units, preset=laf_preset
        ),
        name=f"set_expansion_{method}",
    )


def run(args):
    """Runs `keras-laf expansion`."""
    import keras
    import tensorflow as tf

    experiment = args.experiment
    names = ("laf_units", *(name for name, *_ in KNOBS))
    settings = resolve_settings(args, extra_names=names)
    if args.vectors is not None and args.data is None:
        raise ExperimentError("--vectors needs --data")
    settings["data"] = args.data
    settings["vectors"] = args.vectors
    settings["data_seed"] = DATA_SEED
    store = open_store(
        args,
        settings,
        KEY_FIELDS,
        expansion_records,
        group_fields=("method", "metric"),
        value_field="value",
    )

    def make_data(key):
        source = args.data or "the generated benchmark"
        log(experiment, f"loading the word sets of {source}")
        data = load_data(args)
        log(
            experiment,
            f"{data.num_words} words, "
            + ", ".join(f"{len(data.sets[name])} {name}" for name in data.sets)
            + f" sets of {data.query_size} query words and one held out",
        )
        if len(data.sets["train"]) == 0 or len(data.sets["test"]) == 0:
            raise ExperimentError("the data need training and test sets")
        return data

    data = cached(make_data, lambda key: DATA_SEED)

    def training_data(key):
        inputs, labels = training_pairs(
            data(key).sets["train"], data(key).num_words, key["seed"]
        )
        train = tf.data.Dataset.from_tensor_slices((inputs, labels))
        train = train.batch(args.batch_size)
        validation_sets = data(key).sets["validation"]
        if len(validation_sets) == 0:
            validation_sets = data(key).sets["train"][:1]
        inputs, labels = training_pairs(
            validation_sets,
            data(key).num_words,
            VALIDATION_SEED + key["seed"],
        )
        validation = tf.data.Dataset.from_tensor_slices((inputs, labels))
        return train, validation.batch(PREDICT_BATCH_SIZE)

    fitting = runner.fitting(
        args,
        settings,
        training_data,
        build_model=lambda key: build_model(
            key["method"], data(key), args.laf_units, args.laf_preset
        ),
        loss=keras.losses.BinaryCrossentropy(from_logits=True),
        callbacks=lambda key, data: [keras.callbacks.TerminateOnNaN()],
    )

    def train(key, store):
        if key["method"] in TRAINED:
            return fitting(key, store)
        return None, {"epochs": 0, "train_seconds": 0.0}

    def evaluate(key, model):
        test = data(key).sets["test"]
        queries = test[:, :-1]
        if model is None:
            scores = untrained_scores(
                key["method"], data(key).vectors, queries, key["seed"]
            )
        else:
            scores = model_scores(model, queries, data(key).num_words)
        values = metrics(ranks(scores, test))
        summary = ", ".join(
            f"{metric} {values[metric]:.3g}" for metric in METRICS
        )
        return {"metrics": values}, summary

    reports.run_methods(args, store, train, evaluate)
    reports.write_results(
        args,
        store,
        table=(TABLE, lambda: results_table(store.summary, settings)),
        figure=(PLOT, lambda: results_figure(store.summary)),
    )


def results_table(summary, settings):
    """The Markdown table of `table.md`: every metric of every method.

    Args:
        summary: the records of `summary.csv` (`method`, `metric`,
            `value_mean`, `value_std`, `num_seeds`).
        settings: the run's settings.

    Returns:
        The Markdown text, a row per method: the mean (± std over the
        seeds) of each metric.
    """
    found = {(r["method"], r["metric"]): r for r in summary}
    rows = [
        [methods.METHODS[method].label]
        + [
            reports.mean_std(
                found[method, metric],
                "value",
                0 if metric == "median_rank" else 3,
            )
            for metric in METRICS
        ]
        for method in dict.fromkeys(record["method"] for record in summary)
    ]
    seeds = reports.counted([r["num_seeds"] for r in summary], "seed")
    return (
        "# Set expansion: recall@k, MRR (higher is better), median rank\n\n"
        f"Data: {settings['data'] or 'the generated benchmark'}; "
        f"{settings['train_size']} training sets, "
        f"{reports.counted([settings['epochs']], 'epoch')}, "
        f"{settings['laf_units']} LAF units; mean (± std) over {seeds}.\n\n"
        + reports.markdown_table(["Method", *METRICS], rows)
        + "\n"
    )


def results_figure(summary):
    """The figure of `metrics.png`: recall@k and MRR of every method, as
    bars."""
    found = {(r["method"], r["metric"]): r for r in summary}
    shown = [metric for metric in METRICS if metric != "median_rank"]
    scores = {
        method: (
            [found[method, metric]["value_mean"] for metric in shown],
            [found[method, metric]["value_std"] for metric in shown],
        )
        for method in dict.fromkeys(record["method"] for record in summary)
    }
    return plots.metrics_figure(
        shown,
        scores,
        ylabel="share of test sets (MRR: mean 1 / rank)",
        title="Set expansion: higher is better",
    )
