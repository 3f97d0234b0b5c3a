"""The experiments of the LAF paper, run by the `keras-laf` command.

One module per subcommand (`scalars`, `mnist`, `pointcloud`,
`unique_sum`), each exposing `HELP`, `DESCRIPTION`, `add_arguments(parser)`
and `run(args)`; `cli.SUBCOMMANDS` lists them. `common` holds what they
share: argument parsing, the output directory and its recorded results,
training with the paper's optimiser settings, and errors; `plots` draws the
figures and tables.
"""
