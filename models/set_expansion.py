"""A set-expansion model: scores a candidate word against a query set.

Set expansion (Zaheer et al., "Deep Sets", NeurIPS 2017, Section 4.3;
Section 4.4 of the LAF paper, Pellegrini et al., IJCAI 2021): given a few
words of a concept, rank the words of the vocabulary by how likely they
belong to the same concept. `laf_experiments.commands.expansion` trains it.
"""

import keras
import numpy as np

from keras_laf import aggregations
from keras_laf.core.validation import check_positive_int
from keras_laf.models.building_blocks import check_widths

# The aggregations of the LAF paper's set expansion.
AGGREGATIONS = ("laf", "sum", "pna")


def set_expansion(
    vocabulary_size,
    embedding_dim=None,
    embeddings=None,
    train_embeddings=False,
    aggregation="laf",
    aggregation_kwargs=None,
    phi_units=(64,),
    scorer_units=(64,),
    name="set_expansion",
):
    """Builds a set-expansion scorer: MLP([aggregate(query), candidate]).

    The words of the query set and the candidate word are embedded (fixed
    word vectors, `embeddings`, or a learned embedding); each query word
    passes through phi (dense layers, the last with a sigmoid, since LAF
    takes values in [0, 1]) and the query set is aggregated with
    `aggregation`. The score of the candidate, a logit, is an MLP of the
    aggregate and the candidate's embedding: both are projected to
    `scorer_units[0]` tanh features, concatenated with their elementwise
    product (which lets the MLP compare them at once), then pass through
    ReLU layers of `scorer_units[1:]` and a linear output. This is the
    concatenation variant of DeepSets' set-expansion models, not DeepSets'
    energy of the set with the candidate added. Train it with a binary
    cross-entropy from logits on candidates of the query's concept
    (label 1) and other words (label 0).

    The model is two named sub-models under the word embedding, so that a
    query set is encoded once and scored against the whole vocabulary:
    `model.get_layer("set_encoder")` maps embedded query words
    `(batch, set_size, embedding_dim)` to the aggregate, and
    `model.get_layer("scorer")` maps `[aggregate, candidate vector]` to
    the logit.

    Args:
        vocabulary_size: int. Number of words; word ids are in
            `[0, vocabulary_size)`.
        embedding_dim: int. Width of a learned embedding. Defaults to the
            width of `embeddings`, or `50` without them.
        embeddings: optional float array `(vocabulary_size, dim)`, fixed
            word vectors (e.g. word2vec) that initialise the embedding.
        train_embeddings: bool. Whether the word embedding is trained.
            Defaults to `False` (True without `embeddings`).
        aggregation: the aggregation of the query set, an identifier of
            `keras_laf.aggregations.resolve`: the paper's `"laf"` (LAF, 9
            units unless told), `"sum"` (DeepSets) or `"pna"` (PNA's mean,
            max, sum, std, var, skewness, kurtosis), any other name, a list
            or a layer. Defaults to `"laf"`.
        aggregation_kwargs: dict. The arguments of an aggregation given by
            name, e.g. `{"units": 9, "preset": "closed_forms"}` for
            `"laf"`. Defaults to `None`: the name's defaults.
        phi_units: widths of phi's dense layers, the last with a sigmoid.
            Defaults to `(64,)`.
        scorer_units: widths of the scorer's projections (the first) and
            of its hidden ReLU layers (the others). Defaults to `(64,)`.
        name: str. The model's name. Defaults to `"set_expansion"`.

    Returns:
        An uncompiled `keras.Model` with inputs `{"query": (batch,
        set_size) int32, "candidate": (batch,) int32}` and output the
        logit `(batch, 1)`. Every query set of a batch has the same size;
        sizes may change between batches.

    Example:

    >>> model = set_expansion(vocabulary_size=20, embedding_dim=4)
    >>> logits = model({"query": np.array([[1, 2, 3]]),
    ...                 "candidate": np.array([4])})
    >>> tuple(logits.shape)
    (1, 1)
    """
    vocabulary_size = check_positive_int("vocabulary_size", vocabulary_size)
    phi_units = check_widths("phi_units", phi_units)
    if not phi_units:
        raise ValueError(
            "`phi_units` needs at least one width. Received: phi_units=()"
        )
    scorer_units = check_widths("scorer_units", scorer_units)
    if not scorer_units:
        raise ValueError(
            "`scorer_units` needs at least one width. Received: scorer_units=()"
        )
    if embeddings is not None:
        embeddings = np.asarray(embeddings, "float32")
        if embeddings.ndim != 2 or embeddings.shape[0] != vocabulary_size:
            raise ValueError(
                "`embeddings` must have shape (vocabulary_size, dim) = "
                f"({vocabulary_size}, dim). Received: "
                f"embeddings.shape={embeddings.shape}"
            )
        if embedding_dim is not None and embedding_dim != embeddings.shape[1]:
            raise ValueError(
                "`embedding_dim` must be the width of `embeddings`, "
                f"{embeddings.shape[1]}. Received: "
                f"embedding_dim={embedding_dim}"
            )
        embedding_dim = embeddings.shape[1]
    else:
        train_embeddings = True
        embedding_dim = 50 if embedding_dim is None else embedding_dim
    embedding_dim = check_positive_int("embedding_dim", embedding_dim)

    # The query set: phi on each word, then the aggregation.
    query_vectors = keras.Input((None, embedding_dim), name="query_vectors")
    elements = query_vectors
    for index, width in enumerate(phi_units):
        last = index == len(phi_units) - 1
        elements = keras.layers.Dense(
            width,
            activation="sigmoid" if last else "tanh",
            name=f"phi_{index + 1}",
        )(elements)
    aggregate = aggregations.resolve(
        aggregation,
        **aggregations.held_kwargs(
            aggregation, aggregation_kwargs, "aggregation", None
        ),
    )(elements)
    set_encoder = keras.Model(query_vectors, aggregate, name="set_encoder")

    # The score of a candidate against the aggregate: an MLP of both
    # projected to `scorer_units[0]` features and of their product.
    set_features = keras.Input((aggregate.shape[-1],), name="set_features")
    candidate_vector = keras.Input((embedding_dim,), name="candidate_vector")
    set_projection = keras.layers.Dense(
        scorer_units[0], activation="tanh", name="set_projection"
    )(set_features)
    candidate_projection = keras.layers.Dense(
        scorer_units[0], activation="tanh", name="candidate_projection"
    )(candidate_vector)
    product = keras.layers.Multiply(name="product")(
        [set_projection, candidate_projection]
    )
    hidden = keras.layers.Concatenate(name="concatenate")(
        [set_projection, candidate_projection, product]
    )
    for index, width in enumerate(scorer_units[1:]):
        hidden = keras.layers.Dense(
            width, activation="relu", name=f"scorer_{index + 1}"
        )(hidden)
    logit = keras.layers.Dense(1, name="logit")(hidden)
    scorer = keras.Model([set_features, candidate_vector], logit, name="scorer")

    inputs = {
        "query": keras.Input((None,), dtype="int32", name="query"),
        "candidate": keras.Input((), dtype="int32", name="candidate"),
    }
    word_embedding = keras.layers.Embedding(
        vocabulary_size,
        embedding_dim,
        trainable=bool(train_embeddings),
        name="word_embedding",
    )
    if embeddings is not None:
        # Set after building, so that the config holds no array.
        word_embedding.build((None,))
        word_embedding.set_weights([embeddings])
    outputs = scorer(
        [
            set_encoder(word_embedding(inputs["query"])),
            word_embedding(inputs["candidate"]),
        ]
    )
    return keras.Model(inputs, outputs, name=name)
