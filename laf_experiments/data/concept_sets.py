"""Word sets of concepts for set expansion, generated offline or loaded.

The benchmark of DeepSets' text-concept set expansion (Zaheer et al.,
"Deep Sets", NeurIPS 2017, Section 4.3; Section 4.4 of the LAF paper)
samples sets of words from the topics of an LDA model of Wikipedia and
asks for more words of the same topic. `make_concept_benchmark` builds a
generated stand-in with no download:

- every word w of a vocabulary of `num_words` has a topic mixture
  `theta_w ~ Dirichlet(concentration / num_concepts)` over
  `num_concepts` topics (the concepts), `concentration` being the sum of
  the Dirichlet's parameters; a topic's word distribution `beta_c(w)` is
  proportional to `theta_w[c]`, so a word with a peaked mixture belongs
  to one concept;
- the fixed word vectors (the stand-in for word2vec) are
  `theta_w @ centres + noise`: random topic centres of `vector_dim`
  dimensions, mixed by the word's topics, plus Gaussian noise of standard
  deviation `vector_noise` (relative to the centres' unit scale);
- a set of a concept draws `query_size + 1` distinct words from
  `beta_c`; the first `query_size` are the query, the last the held-out
  word to find.

The difficulty knobs: a larger `concentration` gives words more mixed
topics (concepts overlap), a larger `vector_noise` hides the topics in the
vectors, a larger vocabulary or more concepts make the ranking longer,
and a smaller `query_size` gives less evidence.

`load_lda_sets` reads files in the layout assumed for DeepSets' LDA data
(see there), for users who have them.
"""

import json
import pathlib

import numpy as np

# The names of the splits of a benchmark.
SPLITS = ("train", "validation", "test")
# Width of the random starting vectors of `load_lda_sets` without vectors.
RANDOM_VECTOR_DIM = 50


class ConceptSets:
    """Word sets of concepts, with the vocabulary's fixed word vectors.

    Attributes:
        vectors: float32 `(num_words, vector_dim)`, the fixed word vectors.
        sets: dict from split name to int32 `(num_sets, query_size + 1)`:
            each row the word ids of one concept, the query first and the
            held-out word last.
        concepts: dict from split name to int `(num_sets,)`, the concept
            of each set (-1 when unknown, as for loaded files).
        words: optional list of the words, for printing.
        given_vectors: whether `vectors` are word vectors (else random
            ones, to start a learned embedding from).
    """

    def __init__(
        self, vectors, sets, concepts=None, words=None, given_vectors=True
    ):
        self.vectors = np.asarray(vectors, "float32")
        self.given_vectors = given_vectors
        self.sets = {name: np.asarray(s, "int32") for name, s in sets.items()}
        if concepts is None:
            concepts = {
                name: np.full(len(s), -1) for name, s in self.sets.items()
            }
        self.concepts = concepts
        self.words = words

    @property
    def num_words(self):
        return self.vectors.shape[0]

    @property
    def query_size(self):
        return self.sets["train"].shape[1] - 1


def make_concept_benchmark(
    num_words=2000,
    num_concepts=50,
    vector_dim=32,
    concentration=1.0,
    vector_noise=0.5,
    query_size=5,
    num_sets=None,
    seed=0,
):
    """Generates the set-expansion benchmark (see the module docstring).

    Args:
        num_words: int. Vocabulary size.
        num_concepts: int. Topics, the concepts.
        vector_dim: int. Width of the word vectors.
        concentration: float. The sum of the Dirichlet parameters of the
            words' topic mixtures (each topic gets `concentration /
            num_concepts`); smaller is more peaked (easier).
        vector_noise: float. Standard deviation of the noise of the word
            vectors; larger is harder.
        query_size: int. Words of a query set.
        num_sets: dict from split name to the number of sets. Defaults to
            1000 training, 200 validation and 200 test sets.
        seed: int. Seed of everything.

    Returns:
        A `ConceptSets`.
    """
    num_sets = num_sets or {"train": 1000, "validation": 200, "test": 200}
    rng = np.random.default_rng(seed)
    # (num_words, num_concepts)
    theta = rng.dirichlet(
        np.full(num_concepts, concentration / num_concepts), num_words
    )
    centres = rng.normal(size=(num_concepts, vector_dim)) / np.sqrt(vector_dim)
    vectors = theta @ centres + rng.normal(
        scale=vector_noise / np.sqrt(vector_dim), size=(num_words, vector_dim)
    )
    # Unit variance, as standardised word vectors.
    vectors = vectors / vectors.std()
    # (num_concepts, num_words): each concept's word distribution.
    beta = (theta / theta.sum(axis=0, keepdims=True)).T
    sets, concepts = {}, {}
    for name in SPLITS:
        count = num_sets[name]
        concepts[name] = rng.integers(num_concepts, size=count)
        sets[name] = (
            np.stack(
                [
                    rng.choice(num_words, query_size + 1, replace=False, p=p)
                    for p in beta[concepts[name]]
                ]
            )
            if count
            else np.zeros((0, query_size + 1), "int32")
        )
    words = [f"word{index}" for index in range(num_words)]
    return ConceptSets(vectors, sets, concepts, words)


def load_lda_sets(path, vectors=None):
    """Loads word sets in the layout assumed for DeepSets' LDA data.

    The layout assumed (the DeepSets data come as one JSON file per
    vocabulary size, e.g. LDA-1k): a JSON object
    `{"data": {"train": [[id, ...], ...], "val": [...], "test": [...]},
    "vocab": [word, ...]}`, every set a list of word ids (integers from 0)
    of the same length, drawn from one LDA topic; `"vocab"` is optional.
    The last word of each set is the held-out word, the others the query.

    Word vectors are not in that file: give them as `vectors`, a `.npy`
    file or an array `(num_words, dim)` whose row i is word i. Without
    them, every word gets a random normal vector of `RANDOM_VECTOR_DIM`
    features (seed 0) and `given_vectors` is False: models should learn
    their embedding from it, and the fixed-vector baselines are random.

    Args:
        path: the JSON file.
        vectors: optional `.npy` path or array of the word vectors.

    Returns:
        A `ConceptSets` (splits `"train"`, `"validation"` and `"test"`).

    Raises:
        ValueError: the file is not in that layout, the sets differ in
            length or hold ids beyond the vectors.
    """
    path = pathlib.Path(path)
    content = json.loads(path.read_text())
    try:
        data = content["data"]
        raw = {
            "train": data["train"],
            "validation": data.get("val", data.get("validation")),
            "test": data["test"],
        }
    except (KeyError, TypeError, AttributeError):
        raise ValueError(
            f"{path} is not in the assumed LDA layout: expected a JSON "
            'object {"data": {"train": [...], "val": [...], "test": '
            "[...]}}."
        ) from None
    if raw["validation"] is None:
        raw["validation"] = []
    sets = {}
    for name, rows in raw.items():
        lengths = {len(row) for row in rows}
        if len(lengths) > 1 or 0 in lengths or 1 in lengths:
            raise ValueError(
                f"The {name} sets of {path} must all have the same length, "
                f"of at least 2. Received lengths {sorted(lengths)}."
            )
        sets[name] = np.asarray(rows, "int64").reshape(
            len(rows), lengths.pop() if lengths else 0
        )
    if sets["validation"].size == 0:
        sets["validation"] = sets["validation"].reshape(
            0, sets["train"].shape[1]
        )
    largest = max(int(s.max()) for s in sets.values() if s.size)
    smallest = min(int(s.min()) for s in sets.values() if s.size)
    words = content.get("vocab")
    num_words = len(words) if words else largest + 1
    if isinstance(vectors, (str, pathlib.Path)):
        vectors = np.load(vectors)
    given_vectors = vectors is not None
    if vectors is None:
        rng = np.random.default_rng(0)
        vectors = rng.normal(size=(num_words, RANDOM_VECTOR_DIM))
    vectors = np.asarray(vectors, "float32")
    if vectors.ndim != 2 or smallest < 0 or largest >= vectors.shape[0]:
        raise ValueError(
            f"The word ids of {path} must lie in [0, {vectors.shape[0]}), "
            f"the rows of the word vectors. Received ids from {smallest} "
            f"to {largest}."
        )
    return ConceptSets(vectors, sets, words=words, given_vectors=given_vectors)
