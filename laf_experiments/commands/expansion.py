"""`keras-laf expansion`: text-concept set expansion (DeepSets, LAF §4.4).

Given a few words of a concept, rank the whole vocabulary so that the
concept's other words come first (Zaheer et al., "Deep Sets", NeurIPS
2017; Section 4.4 and Table 3 of the LAF paper). Every test set is a
query of `query_size` words and one held-out word of the same concept;
the held-out word's rank among the vocabulary (query words excluded, ties
counted half) gives recall@10, @100 and @1000 (the share of test sets
whose word ranks within k), the mean reciprocal rank (MRR) and the median
rank.

Methods:

- `laf`, `deepsets`, `pna`: `keras_laf.models.set_expansion` with a LAF,
  sum or PNA aggregation of the query, trained with a binary
  cross-entropy on held-out words of the query's concept (positives) and
  random words (negatives);
- `random`: a random ranking;
- cheap stand-ins on the fixed word vectors, named after DeepSets'
  baselines but without training: `w2v_near` ranks by the Euclidean
  distance to the mean vector of the query, `nn_max` by the largest
  cosine similarity to a query word, `nn_sum_con` by the sum of the
  cosine similarities to the query words.

The data are generated offline (`laf_experiments.data.concept_sets`:
topic-mixture word vectors, concepts = topics), or read with `--data`
from a JSON file in the layout assumed for DeepSets' LDA sets.
"""

import argparse

import numpy as np

from laf_experiments import reports
from laf_experiments import runner
from laf_experiments.errors import ExperimentError
from laf_experiments.errors import log
from laf_experiments.runner import cached
from laf_experiments.settings import PREDICT_BATCH_SIZE
from laf_experiments.settings import add_common_arguments
from laf_experiments.settings import add_setting_flags
from laf_experiments.settings import choice_list
from laf_experiments.settings import positive_float
from laf_experiments.settings import positive_int
from laf_experiments.settings import resolve_settings
from laf_experiments.store import open_store

TRAINED = {"laf": "laf", "deepsets": "sum", "pna": "pna"}
CHEAP = ("random", "w2v_near", "nn_max", "nn_sum_con")
METHODS = ("laf", "deepsets", "pna", *CHEAP)
METHOD_LABELS = {
    "laf": "LAF",
    "deepsets": "DeepSets (sum)",
    "pna": "PNA",
    "random": "Random",
    "w2v_near": "w2v Near",
    "nn_max": "NN-max (untrained)",
    "nn_sum_con": "NN-sum (untrained)",
}
RECALL_AT = (10, 100, 1000)
METRICS = (*(f"recall@{k}" for k in RECALL_AT), "mrr", "median_rank")
KEY_FIELDS = ("method", "seed")
DATA_SEED = 0
# Negatives per positive pair in the training data.
NEGATIVES = 1
SCORE_BATCH_SIZE = 8192
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


def training_pairs(sets, num_words, seed):
    """Query sets with a candidate and a label, for training.

    Every word of a set is held out once: the other words are the query
    and the word a positive candidate (label 1); `NEGATIVES` random words
    per positive are negatives (label 0).

    Args:
        sets: int `(num_sets, query_size + 1)`.
        num_words: the vocabulary size.
        seed: seed of the negatives and of the order.

    Returns:
        `({"query": (n, query_size), "candidate": (n,)}, labels (n, 1))`.
    """
    rng = np.random.default_rng(seed)
    size = sets.shape[1]
    queries, candidates = [], []
    for held_out in range(size):
        keep = [index for index in range(size) if index != held_out]
        queries.append(sets[:, keep])
        candidates.append(sets[:, held_out])
    queries = np.concatenate(queries)
    positives = np.concatenate(candidates)
    negatives = rng.integers(num_words, size=(NEGATIVES, len(positives)))
    query = np.concatenate([queries] * (1 + NEGATIVES)).astype("int32")
    candidate = np.concatenate([positives, *negatives]).astype("int32")
    labels = np.concatenate(
        [np.ones(len(positives)), np.zeros(NEGATIVES * len(positives))]
    ).astype("float32")[:, None]
    order = rng.permutation(len(labels))
    return (
        {"query": query[order], "candidate": candidate[order]},
        labels[order],
    )


def ranks(scores, sets):
    """The rank of the held-out word of each set among the vocabulary.

    Args:
        scores: float `(num_sets, num_words)`, higher is better.
        sets: int `(num_sets, query_size + 1)`, the held-out word last.

    Returns:
        float `(num_sets,)`: 1 for the best; the query words are left
        out and ties count half.
    """
    scores = np.array(scores, "float64", copy=True)
    rows = np.arange(len(sets))
    for column in range(sets.shape[1] - 1):
        scores[rows, sets[:, column]] = -np.inf
    target = scores[rows, sets[:, -1]][:, None]
    greater = np.sum(scores > target, axis=1)
    ties = np.sum(scores == target, axis=1) - 1
    return 1.0 + greater + ties / 2.0


def metrics(rank_values):
    """recall@k, MRR and median rank of `ranks`."""
    rank_values = np.asarray(rank_values, "float64")
    result = {
        f"recall@{k}": float(np.mean(rank_values <= k)) for k in RECALL_AT
    }
    result["mrr"] = float(np.mean(1.0 / rank_values))
    result["median_rank"] = float(np.median(rank_values))
    return result


def _unit(vectors):
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


def cheap_scores(method, vectors, queries, seed):
    """Scores `(num_sets, num_words)` of a method without training."""
    if method == "random":
        rng = np.random.default_rng(seed)
        return rng.random((len(queries), len(vectors)))
    if method == "w2v_near":
        centres = vectors[queries].mean(axis=1)
        # Minus the squared distance, up to a per-query constant.
        return 2 * centres @ vectors.T - np.sum(vectors**2, axis=1)[None]
    # (num_sets, query_size, num_words)
    units = _unit(vectors)
    similarities = np.einsum("sqd,wd->sqw", units[queries], units)
    if method == "nn_max":
        return similarities.max(axis=1)
    if method == "nn_sum_con":
        return similarities.sum(axis=1)
    raise ValueError(f"Unknown method {method!r}.")


def model_scores(model, queries, num_words):
    """Scores `(num_sets, num_words)` of a `set_expansion` model."""
    vectors = model.get_layer("word_embedding").embeddings.numpy()
    encoder = model.get_layer("set_encoder")
    scorer = model.get_layer("scorer")
    aggregates = encoder.predict(vectors[queries], verbose=0)
    scores = np.zeros((len(queries), num_words), "float32")
    # Queries per chunk: about SCORE_BATCH_SIZE pairs at once.
    step = max(1, SCORE_BATCH_SIZE // num_words)
    for start in range(0, len(queries), step):
        chunk = aggregates[start : start + step]
        # (chunk * num_words, features): every query with every word.
        pairs = [
            np.repeat(chunk, num_words, axis=0),
            np.tile(vectors, (len(chunk), 1)),
        ]
        logits = scorer.predict_on_batch(pairs)
        scores[start : start + step] = np.reshape(logits, (-1, num_words))
    return scores


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

    return set_expansion(
        vocabulary_size=data.num_words,
        embeddings=data.vectors,
        # Random starting vectors (no --vectors) are learned.
        train_embeddings=not data.given_vectors,
        aggregation=TRAINED[method],
        laf_units=laf_units,
        laf_preset=laf_preset,
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
            validation_sets, data(key).num_words, 10_000 + key["seed"]
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
            scores = cheap_scores(
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
        figure=(PLOT, lambda: plot_results(store.summary)),
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
    methods = [m for m in METHODS if any(r["method"] == m for r in summary)]
    lines = [
        "# Set expansion: recall@k, MRR (higher is better), median rank",
        "",
        f"Data: {settings['data'] or 'the generated benchmark'}; "
        f"{settings['train_size']} training sets, {settings['epochs']} "
        f"epochs, {settings['laf_units']} LAF units.",
        "",
        "| Method | " + " | ".join(METRICS) + " |",
        "|" + "|".join(" --- " for _ in range(len(METRICS) + 1)) + "|",
    ]
    for method in methods:
        cells = []
        for metric in METRICS:
            record = next(
                r
                for r in summary
                if r["method"] == method and r["metric"] == metric
            )
            digits = 0 if metric == "median_rank" else 3
            text = f"{record['value_mean']:.{digits}f}"
            if record["num_seeds"] > 1:
                text += f" ± {record['value_std']:.{digits}f}"
            cells.append(text)
        lines.append(f"| {METHOD_LABELS[method]} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot_results(summary):
    """The figure of `metrics.png`: recall@k and MRR of every method, as
    bars."""
    from matplotlib.figure import Figure

    methods = [m for m in METHODS if any(r["method"] == m for r in summary)]
    shown = [metric for metric in METRICS if metric != "median_rank"]
    figure = Figure(figsize=(9, 4), layout="constrained")
    axis = figure.subplots()
    positions = np.arange(len(shown))
    width = 0.8 / len(methods)
    for index, method in enumerate(methods):
        means, stds = [], []
        for metric in shown:
            record = next(
                r
                for r in summary
                if r["method"] == method and r["metric"] == metric
            )
            means.append(record["value_mean"])
            stds.append(record["value_std"])
        axis.bar(
            positions - 0.4 + width * (index + 0.5),
            means,
            width,
            yerr=stds,
            label=METHOD_LABELS[method],
        )
    axis.set_xticks(positions, shown)
    axis.set_ylim(0, 1)
    axis.set_ylabel("share of test sets (MRR: mean 1 / rank)")
    axis.set_title("Set expansion: higher is better")
    axis.grid(axis="y", alpha=0.3)
    figure.legend(loc="outside right upper", fontsize="small")
    return figure
