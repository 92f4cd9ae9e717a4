"""The refreshable engine: keeps a main Delta table equal to a model's full snapshot,
writing only what changed, resumably, under a persistent lock.

One module per job:

- ``spec``: the model's refreshable config, validated (the one place config is checked).
- ``naming``: the names of a model's tables and of the engine's own columns.
- ``sql``: quoting and literals for generated Spark SQL.
- ``state``: the state machine (IDLE, REFRESHING, FINISHING, CLEANUP) and the lease
  (compare-and-set on a one-row Delta table, heartbeat, owner liveness).
- ``tables``: creating, adopting, evolving and dropping the tables.
- ``load``: evaluating the snapshot into staging, laid out by vnode, and validating it.
- ``progress``: the chunk plan and per-vnode checkpoints.
- ``merge``: the per-chunk diff of staging against main and its atomic apply.
- ``recovery``: what a run must do first, given the state it finds.
- ``report``: progress lines while a refresh runs, and the run's result.
- ``faults``: named crash points for tests.
- ``refresh``: one run, start to end; the job the materialization submits.
"""
