"""Tests of set expansion: the builder, the data, the metrics, the command."""

import json
import math

import keras
import numpy as np
import pytest
from experiment_helpers import QUIET
from experiment_helpers import assert_png
from experiment_helpers import read_csv
from experiment_helpers import read_json
from experiment_helpers import run

from keras_laf.models import set_expansion
from laf_experiments import word_ranking
from laf_experiments.commands import expansion
from laf_experiments.data import concept_sets


def assert_one_line_error(status, err, text):
    assert status == 2
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("keras-laf") and text in last


@pytest.mark.parametrize("aggregation", ["laf", "sum", "pna"])
def test_builder_names_shapes_and_fixed_vectors(aggregation):
    vectors = np.random.default_rng(0).normal(size=(12, 3)).astype("float32")
    model = set_expansion(12, embeddings=vectors, aggregation=aggregation)
    assert model.name == "set_expansion"
    assert [layer.name for layer in model.layers] == [
        "query",
        "word_embedding",
        "candidate",
        "set_encoder",
        "scorer",
    ]
    embedding = model.get_layer("word_embedding")
    assert not embedding.trainable
    np.testing.assert_array_equal(embedding.embeddings.numpy(), vectors)
    logits = model(
        {
            "query": np.array([[1, 2, 3], [4, 5, 6]]),
            "candidate": np.array([7, 8]),
        }
    )
    assert logits.shape == (2, 1)
    # The query is a set: its order does not matter.
    swapped = model(
        {
            "query": np.array([[3, 1, 2], [6, 4, 5]]),
            "candidate": np.array([7, 8]),
        }
    )
    np.testing.assert_allclose(swapped, logits, rtol=1e-5, atol=1e-6)


def test_builder_learned_embedding_and_save(tmp_path):
    model = set_expansion(10, embedding_dim=4, aggregation="sum")
    assert model.get_layer("word_embedding").trainable
    inputs = {"query": np.array([[1, 2]]), "candidate": np.array([3])}
    expected = model(inputs)
    path = tmp_path / "set_expansion.keras"
    model.save(path)
    reloaded = keras.models.load_model(path)
    np.testing.assert_allclose(reloaded(inputs), expected, rtol=1e-6)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"vocabulary_size": 0}, "vocabulary_size=0"),
        ({"vocabulary_size": 5, "aggregation": "maxi"}, "'maxi'"),
        (
            {"vocabulary_size": 5, "aggregation_kwargs": {"units": 0}},
            "units=0",
        ),
        ({"vocabulary_size": 5, "phi_units": ()}, "phi_units=()"),
        ({"vocabulary_size": 5, "scorer_units": ()}, "scorer_units=()"),
        (
            {"vocabulary_size": 5, "embeddings": np.zeros((4, 2))},
            r"embeddings.shape=\(4, 2\)",
        ),
        (
            {
                "vocabulary_size": 5,
                "embeddings": np.zeros((5, 2)),
                "embedding_dim": 3,
            },
            "embedding_dim=3",
        ),
    ],
)
def test_builder_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        set_expansion(**kwargs)


def test_ranks_and_metrics_by_hand():
    # Two sets over 5 words, the held-out word last, the query before.
    sets = np.array([[0, 1, 2], [3, 4, 0]])
    scores = np.array(
        [
            [9.0, 9.0, 5.0, 7.0, 1.0],  # word 2 behind word 3: rank 2
            [0.5, 0.0, 0.2, 9.0, 9.0],  # word 0 first: rank 1
        ]
    )
    np.testing.assert_array_equal(word_ranking.ranks(scores, sets), [2, 1])
    # A tie with one other word counts half.
    tied = np.array([[0.0, 0.0, 3.0, 3.0, 1.0]])
    assert word_ranking.ranks(tied, sets[:1])[0] == 1.5
    values = word_ranking.metrics([1, 2, 50, 500, 2000])
    assert values["recall@10"] == pytest.approx(0.4)
    assert values["recall@100"] == pytest.approx(0.6)
    assert values["recall@1000"] == pytest.approx(0.8)
    assert values["mrr"] == pytest.approx(
        np.mean([1, 0.5, 1 / 50, 1 / 500, 1 / 2000])
    )
    assert values["median_rank"] == 50


def test_untrained_scores():
    vectors = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [-1.0, 0.0]])
    queries = np.array([[0, 1]])
    for method in ("w2v_near", "nn_max", "nn_sum_con"):
        scores = word_ranking.untrained_scores(method, vectors, queries, 0)
        assert scores.shape == (1, 4)
        # Word 2 (orthogonal) before word 3 (opposite).
        assert scores[0, 2] > scores[0, 3]
    random = word_ranking.untrained_scores("random", vectors, queries, 0)
    assert random.shape == (1, 4)


def test_training_pairs():
    sets = np.array([[0, 1, 2], [3, 4, 5]])
    inputs, labels = word_ranking.training_pairs(sets, 10, seed=0)
    assert inputs["query"].shape == (12, 2)
    assert inputs["candidate"].shape == (12,)
    assert labels.shape == (12, 1) and labels.sum() == 6
    for query, candidate, label in zip(
        inputs["query"], inputs["candidate"], labels[:, 0]
    ):
        if label == 1:
            row = sets[0] if query[0] < 3 else sets[1]
            assert {*query, candidate} == set(row)


def test_generated_benchmark():
    sizes = {
        "num_words": 100,
        "num_concepts": 5,
        "vector_dim": 8,
        "query_size": 3,
        "num_sets": {"train": 10, "validation": 2, "test": 4},
    }
    data = concept_sets.make_concept_benchmark(**sizes)
    assert data.vectors.shape == (100, 8)
    assert data.query_size == 3
    assert data.sets["test"].shape == (4, 4)
    for row in data.sets["train"]:
        assert len(set(row)) == 4
    # The same sizes give the same benchmark.
    again = concept_sets.make_concept_benchmark(**sizes)
    np.testing.assert_array_equal(again.sets["train"], data.sets["train"])


def write_lda_fixture(directory):
    content = {
        "data": {
            "train": [[0, 1, 2], [3, 4, 5], [1, 2, 0]],
            "val": [[2, 0, 1]],
            "test": [[3, 5, 4], [0, 2, 1]],
        },
        "vocab": ["a", "b", "c", "d", "e", "f"],
    }
    path = directory / "lda_tiny.json"
    path.write_text(json.dumps(content))
    vectors = np.arange(12, dtype="float32").reshape(6, 2)
    np.save(directory / "vectors.npy", vectors)
    return path, directory / "vectors.npy"


def test_load_lda_sets(tmp_path):
    path, vectors_path = write_lda_fixture(tmp_path)
    data = concept_sets.load_lda_sets(path, vectors_path)
    assert data.words[3] == "d"
    assert data.vectors.shape == (6, 2)
    np.testing.assert_array_equal(data.sets["test"], [[3, 5, 4], [0, 2, 1]])
    assert data.sets["validation"].shape == (1, 3)
    assert data.query_size == 2
    assert data.given_vectors
    random = concept_sets.load_lda_sets(path)
    assert random.vectors.shape == (6, concept_sets.RANDOM_VECTOR_DIM)
    assert not random.given_vectors
    model = expansion.build_model("laf", random, laf_units=2)
    assert model.get_layer("word_embedding").trainable


@pytest.mark.parametrize(
    "content, message",
    [
        ({"sets": []}, "assumed LDA layout"),
        (
            {"data": {"train": [[0, 1], [0, 1, 2]], "test": [[0, 1]]}},
            "same length",
        ),
        ({"data": {"train": [[0, 9]], "test": [[0, 1]]}}, r"\[0, 6\)"),
    ],
)
def test_load_lda_sets_bad_files(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(content))
    with pytest.raises(ValueError, match=message):
        concept_sets.load_lda_sets(path, np.zeros((6, 2)))


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--methods", "laf,bayes"], "unknown method 'bayes'"),
        (["--vector-noise", "-1"], "expected a number of at least 0"),
        (["--concentration", "0"], "expected a positive number"),
        (["--num-words", "0"], "expected a positive integer"),
        (["--data", "missing.json"], "cannot read --data 'missing.json'"),
        (["--vectors", "v.npy"], "--vectors needs --data"),
    ],
)
def test_bad_arguments_exit_with_status_2(argv, message, tmp_path, capsys):
    status, _, err = run(
        ["expansion", *QUIET, *argv, "--output", str(tmp_path)], capsys
    )
    assert_one_line_error(status, err, message)


def test_expansion_on_lda_fixture(tmp_path, capsys):
    path, vectors_path = write_lda_fixture(tmp_path)
    output = tmp_path / "output"
    status, out, _ = run(
        [
            "expansion",
            *QUIET,
            "--methods",
            "deepsets,random,w2v_near",
            "--data",
            str(path),
            "--vectors",
            str(vectors_path),
            "--output",
            str(output),
        ],
        capsys,
    )
    assert status == 0
    rows = read_csv(output / "results.csv")
    assert len(rows) == 3 * len(expansion.METRICS)
    table = (output / expansion.TABLE).read_text()
    assert "| w2v Near |" in table and "lda_tiny.json" in table


@pytest.mark.slow
def test_expansion_quick_writes_results_and_laf_beats_random(tmp_path, capsys):
    status, out, _ = run(
        [
            "expansion",
            *QUIET,
            "--methods",
            "laf,random,w2v_near",
            "--output",
            str(tmp_path),
        ],
        capsys,
    )
    assert status == 0
    results = read_json(tmp_path)
    assert results["experiment"] == "expansion"
    mrr = {run["method"]: run["metrics"]["mrr"] for run in results["runs"]}
    assert set(mrr) == {"laf", "random", "w2v_near"}
    assert all(math.isfinite(value) for value in mrr.values())
    assert mrr["laf"] > mrr["random"]
    rows = read_csv(tmp_path / "results.csv")
    assert list(rows[0]) == ["method", "metric", "value", "seed", "run"]
    assert {row["metric"] for row in rows} == set(expansion.METRICS)
    assert len(rows) == 3 * len(expansion.METRICS)
    assert (tmp_path / "summary.csv").exists()
    table = (tmp_path / expansion.TABLE).read_text()
    assert table.startswith("# Set expansion") and "--quick" in table
    assert "5 epochs" in table and "over 1 seed." in table
    assert "| LAF |" in table and "| Random |" in table
    assert_png(tmp_path / expansion.PLOT)
    assert not (tmp_path / "backups").exists()
