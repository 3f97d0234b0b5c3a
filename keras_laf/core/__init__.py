"""The bottom of keras-laf: what every layer stands on.

- `validation`: the checks of arguments and tensors, raising `ValueError`
  with the value received;
- `devices`: which device computes;
- `config`: the public tuning knobs (the chunk budgets of LAF's power
  sums), exported as `keras_laf.config`;
- `backend`: the backend hooks, one module per Keras backend behind one
  dispatch;
- `sets`: the set layouts (padded with a mask, ragged, flat with segment
  ids) that every aggregation reads.

Nothing here imports the rest of the package.
"""
