"""The `keras-laf` subcommands, one module each.

Each module exposes `HELP` (one line), `DESCRIPTION`,
`add_arguments(parser)` and `run(args)`, and imports TensorFlow only in
`run`, so that the parser is built without it; `laf_experiments.cli`
dispatches to them. What they share lives beside this package in
`laf_experiments`.
"""
