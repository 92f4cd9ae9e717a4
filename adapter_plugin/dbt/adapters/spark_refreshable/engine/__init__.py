"""The refreshable engine: keeps a main Delta table equal to a model's full snapshot,
writing only what changed, resumably, under a persistent lock.

One module per job:

- ``spec``: the model's refreshable config, validated (the one place config is checked).
- ``naming``: the names of a model's tables and of the engine's own columns.
- ``sql``: quoting, literals, types and the typed row hash of generated Spark SQL, and
  the temporary views it reads DataFrames through.
- ``state``: the state machine (IDLE, REFRESHING, FINISHING, CLEANUP) and the state row.
- ``owners``: who runs a refresh, and whether that owner may still be working.
- ``state_log``: which blind append of a state table's log holds the state (the rule
  that makes those appends a compare-and-set).
- ``lease``: the lock, held through compare-and-set appends to a Delta table kept as a
  short log, and its heartbeat.
- ``commits``: the engine's Delta commits (tags, fences, conflicts) and a table's versions.
- ``tables``: creating, adopting, evolving and dropping the tables.
- ``columns``: what a snapshot's columns may be (names, types Delta stores, keys).
- ``datetime_writes``: session settings under which Parquet would store other dates or
  instants than the snapshot's (refused).
- ``inputs``: what a SQL model reads, and whether it changed since the last cycle.
- ``vnodes``: the vnode layout (hash vnodes, or ranges of the first key column).
- ``python_results``: a Python model's result as a Spark DataFrame (pandas converted, and
  refused where Spark's conversion would lose values).
- ``pandas_values``: a pandas value as that conversion walks it (missing, its parts).
- ``wall_times``: datetimes without a time zone whose time that conversion would change.
- ``load``: evaluating the snapshot into staging, laid out by vnode, and validating it.
- ``progress``: the chunk plan and per-vnode checkpoints.
- ``cycle_plan``: a loaded cycle's plan, kept in the change set's commit (or FINISHING).
- ``diff``: the change set (the one diff and change criterion, for a cycle or a chunk).
- ``merge``: a chunk's changes applied to main in one atomic commit.
- ``compaction``: main's small files compacted (``OPTIMIZE``) after a cycle that added many.
- ``scratch_vacuum``: the files of staging's and the change set's old versions deleted.
- ``comments``: main's table and column comments from the model's docs (``persist_docs``).
- ``proof``: what ``refreshable_matches_snapshot`` compares (main and the last snapshot).
- ``recovery``: what a run must do first, given the state it finds.
- ``report``: progress lines while a refresh runs, and the run's result.
- ``faults``: the named crash points a refresh announces; tests install faults there.
- ``job``: the job's contract: the request the materialization sends, the result the
  engine returns (the adapter reports it to dbt), the names of the job's globals.
- ``refresh``: one run, start to end; the job the materialization submits.
"""
