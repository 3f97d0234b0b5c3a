"""The paper's application: the experiments of LAF, run by `keras-laf`.

Installed beside the `keras_laf` library with the `experiments` extra
(`pip install "keras-laf[experiments]"`), which brings its dependencies
(matplotlib, tensorflow-datasets, scikit-learn, networkx, keras-tuner).

One module per subcommand in `commands` (`scalars`, `mnist`,
`unique_sum`, `pointcloud`, `graphs`, `tune`, `units`, `expansion`), each
exposing `HELP`, `DESCRIPTION`, `add_arguments(parser)` and `run(args)`;
`cli.SUBCOMMANDS` lists them. They import TensorFlow only in `run`, so
the parser is built without it. What they share sits beside `commands`:
`errors` (problems a user can fix, progress lines), `settings` (argument
parsing, the training settings, the data seeds), `store` (the output
directory and its recorded results), `runner` (the loop of every
experiment: skip what is recorded, resume, seed, train, evaluate,
record), `methods` (the one table of methods: names, labels, colours,
markers and aggregations), `reports` (the method-by-seed loop, the
Markdown tables and the files written after the runs), `plots` (the
figures), `regression` (the set-regression experiments on sets of
digits: their arguments, data and plots) and `data` (the paper's data
sets, where `keras_laf.datasets` holds the package's input pipelines).
A command's own model and table code sits beside them too:
`graph_networks`, `graph_reports` and `early_stopping` for `graphs`,
`word_ranking` for `expansion`, `unit_search` for `tune`.
"""
