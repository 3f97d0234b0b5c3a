"""The ranking of a vocabulary given a few words of a concept (`keras-laf
expansion`): the training pairs of a set-expansion model, the scores of
the untrained rankings and of a trained model, and the ranks and metrics
of the held-out words.
"""

import numpy as np

# The rankings without training.
UNTRAINED = ("random", "w2v_near", "nn_max", "nn_sum_con")
RECALL_AT = (10, 100, 1000)
METRICS = (*(f"recall@{k}" for k in RECALL_AT), "mrr", "median_rank")
# Negatives per positive pair in the training data.
NEGATIVES = 1
# Query-word pairs scored at once.
SCORE_BATCH_SIZE = 8192


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


def untrained_scores(method, vectors, queries, seed):
    """Scores `(num_sets, num_words)` of a ranking without training.

    Named after DeepSets' baselines, on the fixed word vectors: `random`
    a random ranking, `w2v_near` the Euclidean distance to the query's
    mean vector, `nn_max` the largest cosine similarity to a query word,
    `nn_sum_con` the sum of the cosine similarities to the query words.
    """
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
