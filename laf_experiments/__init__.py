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
record), `regression` (the set-regression experiments on sets of digits:
their arguments, data and plots), `reports` (the method-by-seed loop and
the tables and figures of `graphs`, `expansion` and `tune`), `plots`
(figures and tables) and `data` (the paper's data sets, where
`keras_laf.datasets` holds the package's input pipelines); each command
is a module of `commands` (`commands.graphs`: the graph-properties
experiment).
"""
