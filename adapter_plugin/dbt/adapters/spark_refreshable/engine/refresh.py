"""One run of a refreshable model, start to end: the job the materialization submits.

    acquire lease -> recover (see ``recovery``) -> load -> validate and diff
      -> the change set written, the cycle's plan in its commit (``cycle_plan``)
      -> merge chunk by chunk (checkpoint, heartbeat, cancellation between chunks)
         (the last chunk's checkpoint is the move to IDLE)
      -> IDLE, the snapshot's summary stored in the same commit

The state stays REFRESHING from the lease to IDLE: a crash once the change set is written
leaves a cycle the next run resumes from the change set's commit. A first build has no
change set (staging is the change set) and records its plan by moving to FINISHING. A cycle
with nothing to merge (no changed row) goes from REFRESHING to IDLE directly: there is
nothing to resume, and a crash before IDLE loads again.

Nothing is ever emptied: the next cycle overwrites staging and the change set, and its first
checkpoint replaces the progress rows of the cycles before it, also after a discarded cycle.

On a failure the run gives its lease up so that the next run can go on at once: a failed
load goes back to IDLE (staging is rewritten next time); a failed or cancelled merge is
recorded as FINISHING, with its plan, and resumed. A lost lease stops the run without
touching anything.
"""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql.types import StructField, StructType

from dbt.adapters.spark_refreshable.engine import diff, faults, load, progress, scratch_vacuum
from dbt.adapters.spark_refreshable.engine.commits import (
    SESSION_CONF_LOCK,
    engine_commit,
    fence_app_id,
    recent_commits,
    refuse_session_write_ids,
    table_id,
    written_by_newest_commit,
)
from dbt.adapters.spark_refreshable.engine.compaction import MainFiles, compact_main
from dbt.adapters.spark_refreshable.engine.cycle_plan import (
    CyclePlan,
    LoadedCycle,
    committed_cycle,
    resumable_cycle,
)
from dbt.adapters.spark_refreshable.engine.datetime_writes import (
    ancient_value_refused,
    refuse_lossy_datetime_writes,
)
from dbt.adapters.spark_refreshable.engine.errors import (
    ConfigError,
    InjectedFault,
    LeaseLostError,
    RefreshCancelledError,
    RefreshError,
    first_line,
    message_of,
)
from dbt.adapters.spark_refreshable.engine.inputs import (
    Inputs,
    Recorded,
    VerifiedMain,
    main_schema,
    read_inputs,
    reason_to_refresh,
)
from dbt.adapters.spark_refreshable.engine.job import RefreshRequest, RefreshResult
from dbt.adapters.spark_refreshable.engine.lease import Heartbeat, Lease
from dbt.adapters.spark_refreshable.engine.merge import (
    ChunkResult,
    Cycle,
    MainHistory,
    chunk_tag,
    chunk_write_settings,
    main_version,
    merge_chunk,
    schema_tag,
)
from dbt.adapters.spark_refreshable.engine.naming import (
    BOOKKEEPING_SUFFIXES,
    ModelTables,
    fold_name,
)
from dbt.adapters.spark_refreshable.engine.owners import Owner
from dbt.adapters.spark_refreshable.engine.proof import LastSnapshot
from dbt.adapters.spark_refreshable.engine.python_results import as_spark_frame
from dbt.adapters.spark_refreshable.engine.recovery import Recovery, describe, recovery_for
from dbt.adapters.spark_refreshable.engine.report import ProgressReporter, Stopwatch
from dbt.adapters.spark_refreshable.engine.spec import RefreshConfig
from dbt.adapters.spark_refreshable.engine.sql import (
    refuse_sql_text_settings,
    row_hash_expression,
    temp_view,
)
from dbt.adapters.spark_refreshable.engine.state import RELEASED_OWNER, Phase, State
from dbt.adapters.spark_refreshable.engine.tables import (
    FILES_GONE,
    NO_MAIN,
    MainDetail,
    SchemaPlan,
    add_contract_constraints,
    add_missing_state_columns,
    claim_bookkeeping_tables,
    columns_of,
    create_or_evolve_main,
    create_state_table,
    drop_all,
    drop_bookkeeping,
    ensure_bookkeeping_schema,
    ensure_state_table,
    forget_catalog_size,
    layout_columns,
    layout_drift,
    main_detail,
    main_location,
    refuse_another_models_location,
    refuse_bookkeeping_table_as_main,
    refuse_dropping_layout_columns,
    replace_main,
    set_table_properties,
    table_exists,
)
from dbt.adapters.spark_refreshable.engine.vnodes import VnodeLayout, choose_layout

# Spark's session catalog (Hive metastore) allows table names of letters, digits and _ only;
# of a name with a backtick, Spark 4.2 fails while wording that error, under another condition
INVALID_NAME_CONDITIONS = ("INVALID_SCHEMA_OR_RELATION_NAME", "INVALID_ATTRIBUTE_NAME_SYNTAX")
CYCLE_FIELDS_CLEARED = dict.fromkeys(
    (
        "refresh_id",
        "started_at",
        "vnodes",
        "chunks_total",
        "snapshot_rows",
        "snapshot_checksum",
        "cycle_plan",
    )
)


@dataclass(frozen=True)
class Staged:
    """A snapshot written to staging (``RefreshRun._stage``), and main as its diff finds it:
    ``staged_rows`` as staging's commit counted them (None if it did not), ``written`` its
    totals as its write counted them (None if Spark did not report them); ``base_version``
    None when main does not exist; ``index`` main's keys and hashes kept from the last cycle
    (the diff checks them), None when the diff must read main."""

    plan: SchemaPlan
    layout: VnodeLayout
    staging_version: int
    staged_rows: int | None
    written: load.StagedTotals | None
    main_exists: bool
    base_version: int | None
    main_id: str | None
    index: diff.MainIndex | None
    inputs: Inputs | None
    main_checks: dict[str, str]  # main's own CHECK constraints, which the merge meets
    partition_columns: list[str]  # main's (as created, or as this cycle creates it)


def run_refresh(
    spark: Any,
    request: dict[str, Any],
    snapshot: Callable[[], Any] | None = None,
    job: Any = None,
) -> RefreshResult:
    """Refresh one model. ``request``: a :class:`RefreshRequest` as JSON. ``snapshot``
    evaluates a Python model (called at most once, only when a new cycle loads); a SQL
    model's is ``spark.sql(sql)``. ``job``: the JobContext whose ``cancelled`` event stops
    the merge."""
    asked = RefreshRequest.from_json(request)
    sql = asked.sql
    if snapshot is None:
        if sql is None:
            raise ValueError("a refresh request needs the model's `sql` or a snapshot function")
        snapshot = lambda: spark.sql(sql)  # noqa: E731
    config = RefreshConfig.from_model_config(asked.config)
    refuse_session_write_ids(spark)
    refuse_sql_text_settings(spark)
    run = RefreshRun(
        spark=spark,
        tables=ModelTables(asked.schema, asked.identifier, config.bookkeeping_schema),
        config=config,
        owner=Owner.this_process(asked.invocation_id),
        job=job,
        sql=sql,
    )
    if asked.empty and not asked.full_refresh and table_exists(spark, run.tables.main):
        return run.skip_for_empty()
    return run.execute(snapshot, full_refresh=asked.full_refresh)


class RefreshRun:
    def __init__(
        self,
        spark: Any,
        tables: ModelTables,
        config: RefreshConfig,
        owner: Owner,
        job: Any = None,
        sql: str | None = None,
    ) -> None:
        """``sql``: a SQL model's compiled code (None: a Python model), whose inputs the
        run can check for changes."""
        self.spark = spark
        self.sql = sql
        self.tables = tables
        self.config = config
        self.lease = Lease(spark, tables.state, owner, config.lock_timeout)
        self.job = job
        self.faults = faults.for_run()
        self.clock = Stopwatch()
        self.started = time.monotonic()
        self.report = ProgressReporter(tables.display)
        self.view = f"refreshable_changes_{owner.owner_id}"
        self.index_view = f"refreshable_index_{owner.owner_id}"
        self.snapshot_view = f"refreshable_snapshot_{owner.owner_id}"  # a --full-refresh's
        self.result = RefreshResult()
        self._checkpoints_written = False  # has the cycle any progress row yet
        self._unrecorded: list[progress.MergedChunk] = []  # merged, not in the progress table
        self._recorded_at = 0.0  # when the progress table was last written (monotonic)
        self._inputs: Inputs | str | None = None  # what the snapshot reads, or why unknown
        # main's files as this run's load found them, plus its chunks' commits (None: the
        # cycle was loaded by an earlier run; see ``compaction``)
        self._main_files: MainFiles | None = None
        self._merging: LoadedCycle | None = None  # the cycle being merged, its plan committed
        self._held: tuple[Any, SchemaPlan] | None = None  # a --full-refresh's rows and plan
        self._replaced_rows = 0  # written by a --full-refresh's replace of main
        self._kept_staging = False  # this run's load found staging holding its snapshot

    # -- the run ---------------------------------------------------------------------
    def execute(self, snapshot: Callable[[], Any], full_refresh: bool) -> RefreshResult:
        if full_refresh:
            snapshot = self._held_before_full_refresh(snapshot)
        with self.clock.measure("bookkeeping"):
            found, outdated = self._claim(snapshot, full_refresh)
            if isinstance(found, RefreshResult):
                return found
        try:
            self._upgrade_bookkeeping(outdated)
            with Heartbeat(self.lease, self.config.heartbeat_interval):
                self._run(found, snapshot)
        except InjectedFault:
            self.lease.forget()  # a simulated crash: leave the state as a crash would
            raise
        except BaseException as error:
            guidance = self._give_up(error)
            cause = ancient_value_refused(self.spark, error)
            if cause:  # named first, then what the next run does
                untouched = "Main was not touched." if self._merging is None else ""
                told = f"{cause} {guidance or untouched}".rstrip()
                raise RefreshError(f"{told}\n{message_of(error)}") from error
            if guidance:
                raise RefreshError(f"{message_of(error)}\n{guidance}") from error
            raise
        self.lease.forget()
        return self._result()

    def _held_before_full_refresh(self, snapshot: Callable[[], Any]) -> Callable[[], Any]:
        """``--full-refresh`` replaces main with its snapshot, or drops it, before the cycle
        (``_replace_or_drop_main``). First the model runs and every row of its snapshot is
        computed and held by Spark (``localCheckpoint``), and checked as a first build's load
        checks it: columns, main's folder, keys, the contract's constraints, partition
        values. A model that fails, or a snapshot refused, leaves main as it was. The replace
        and the cycle then read the rows held; the model does not run again."""
        spark, tables, config = self.spark, self.tables, self.config
        self._read_inputs(snapshot)  # what the model reads, from its own plan
        with self.clock.measure("load"):
            frame = as_spark_frame(spark, snapshot())
            plan = load.plan_for(spark, frame, tables, config, None)
            refuse_another_models_location(spark, tables, config, None)
            held = frame.localCheckpoint(eager=True)
            load.refuse_unkeyed_rows(held, plan.keys)
            with temp_view(held, self.snapshot_view) as rows:
                load.check_constraints(spark, tables, config.constraints, {}, rows)
                partitioned = list(config.partition_by)
                load.refuse_lost_partition_values(spark, tables, partitioned, plan.schema, rows)
        self._held = (held, plan)
        return lambda: held

    def _claim(
        self, snapshot: Callable[[], Any], full_refresh: bool
    ) -> tuple[State | RefreshResult, dict[str, dict[str, str]]]:
        """The model's bookkeeping claimed (see ``tables.claim_bookkeeping_tables``) and
        its lease taken: the state as it was before, and the properties that tables of an
        earlier version lack. Or the result of a run that has nothing to do (see
        ``_skipped``): that run reads the state table alone."""
        spark, tables = self.spark, self.tables
        if not tables.bookkeeping_beside_main:
            self._move_bookkeeping_beside_main()
        claimed = claim_bookkeeping_tables(spark, tables, ("state",), dropping=full_refresh)
        has_state = "state" in claimed.present
        read = None
        if has_state and not full_refresh:
            add_missing_state_columns(spark, tables)  # a state table of an earlier version
            skipped, read = self._skipped(snapshot)
            if skipped is not None:
                return skipped, {}
        refuse_bookkeeping_table_as_main(spark, tables)
        if not has_state and not tables.bookkeeping_beside_main:
            ensure_bookkeeping_schema(spark, tables)
        others = tuple(role for role in BOOKKEEPING_SUFFIXES if role != "state")
        outdated = {
            **claimed.outdated,
            **claim_bookkeeping_tables(spark, tables, others, dropping=full_refresh).outdated,
        }
        if full_refresh:
            self._replace_or_drop_main()
            outdated, has_state = {}, False
        found = None if has_state else self._own_new_state_table()
        if found is None:  # the table exists, or another run created it first
            found = self.lease.acquire(just_read=read)
        return found, outdated

    def _own_new_state_table(self) -> State | None:
        """A model's first run (or one after ``--full-refresh`` dropped the state): the
        state table is created holding this run's claim, one commit where an existing table
        takes a read and a compare-and-set. None: another run created it first."""
        try:
            return self.lease.own_new_table(
                lambda claimed: create_state_table(self.spark, self.tables, claimed)
            )
        except AnalysisException as error:  # a model's first table: no table of it exists
            if error.getCondition() not in INVALID_NAME_CONDITIONS:
                raise
            raise ConfigError(
                f"{self.tables.display} cannot be created under that name on this Spark "
                f"catalog: {first_line(error, 500)}. Give the model an `alias` (and "
                f"`schema`) of letters, digits and underscores. No table was created."
            ) from None

    def _upgrade_bookkeeping(self, outdated: dict[str, dict[str, str]]) -> None:
        """Give bookkeeping tables of an earlier version the table properties they lack
        (see ``tables.claim_bookkeeping_tables``), under the lease; a failure only costs
        speed, and the next run tries again."""
        with self.clock.measure("bookkeeping"):
            for name, properties in outdated.items():
                try:
                    set_table_properties(self.spark, name, properties)
                except Exception as error:
                    self.report.say(f"{name} keeps its table properties: {message_of(error)[:300]}")

    def _run(self, found: Any, snapshot: Callable[[], Any]) -> None:
        resumable = resumable_cycle(self.spark, self.tables, found)
        recovery = recovery_for(found, resumable is not None)
        if recovery is not Recovery.NONE:
            self.report.say(describe(recovery, found))
        if recovery is Recovery.RESUME_MERGE:
            discard = self._reason_to_discard(resumable)
            if discard is None:
                self.result.resumed = True
                cycle = self._cycle_of(resumable)
                self._refuse_lossy_resume(cycle.plan)
                self._merge_and_clean_up(resumable, cycle)
                return
            self.report.say(f"discarding cycle {found.refresh_id}: {discard}; loading afresh")
            with self.clock.measure("bookkeeping"):  # its change set and progress are overwritten
                if found.current_phase is Phase.FINISHING:
                    new_cycle = {"refresh_id": uuid.uuid4().hex, "started_at": time.time()}
                    self.lease.transition(Phase.REFRESHING, **{**CYCLE_FIELDS_CLEARED, **new_cycle})
                else:
                    self.lease.restart_cycle()
        elif recovery is Recovery.FINISH_CLEANUP:
            with self.clock.measure("bookkeeping"):
                self.lease.transition(Phase.IDLE, **CYCLE_FIELDS_CLEARED, **RELEASED_OWNER)
                self.lease.acquire()
        elif recovery is Recovery.DISCARD_PARTIAL_LOAD:
            with self.clock.measure("bookkeeping"):  # its staging is overwritten by the load
                self.lease.restart_cycle()
        loaded = self._load(snapshot)
        self._merge_and_clean_up(loaded, self._cycle_of(loaded))

    def _refuse_lossy_resume(self, planned: SchemaPlan) -> None:
        """A resumed merge writes the cycle's columns, and rewrites main's, in this run's
        session, which need not be the one whose load checked them (``load.plan_for``)."""
        main = self.tables.main
        held = columns_of(self.spark, main) if table_exists(self.spark, main) else None
        refuse_lossy_datetime_writes(self.spark, planned.schema, held)

    def _move_bookkeeping_beside_main(self) -> None:
        """Bookkeeping tables that an earlier version kept beside main (see naming) are
        dropped under their own lease (a live owner refuses it, as for any run): this run
        then starts the model's bookkeeping afresh in its own schema and diffs the snapshot
        against main as it is. A cycle the old tables held in progress is given up; main,
        whatever it holds, is brought to the snapshot by this run."""
        old = self.tables.beside_main()
        if not table_exists(self.spark, old.state):
            return
        claim_bookkeeping_tables(self.spark, old)
        ensure_state_table(self.spark, old)
        lease = Lease(self.spark, old.state, self.lease.me, self.config.lock_timeout)
        try:
            lease.read()
        except LeaseLostError as unreadable:
            self.report.say(f"the state table beside main cannot be read ({unreadable})")
        else:
            lease.acquire()
        self.report.say(
            f"moving the bookkeeping tables from schema {self.tables.schema} to "
            f"{self.tables.bookkeeping}: this run diffs the snapshot against main afresh"
        )
        drop_bookkeeping(self.spark, old)
        lease.forget()

    def _replace_or_drop_main(self) -> None:
        """Replace main with the held snapshot in one commit where Delta can (see
        ``tables.replace_main``), else drop it; then drop the bookkeeping tables. All under
        the lease (a live owner refuses it), so that no run can start between the check and
        the drop, and the replace is fenced by it. A state table that cannot be read (not
        one row) holds no lease: it is what --full-refresh repairs. The cycle that follows
        diffs the snapshot against main as it is, so a replaced main is verified equal to
        it; a run stopped in between leaves main whole, the old table or the snapshot."""
        held = self._held
        assert held is not None, "a --full-refresh holds its snapshot first"
        held_lease = False
        if table_exists(self.spark, self.tables.state):
            try:
                self.lease.read()
            except LeaseLostError as unreadable:
                self.report.say(f"--full-refresh: repairing the state table ({unreadable})")
            except AnalysisException as error:
                if error.getCondition() not in FILES_GONE:
                    raise
                self.report.say("--full-refresh: the state table's files are gone; dropping it")
            else:
                self.lease.acquire()
                held_lease = True
        try:
            with self.clock.measure("merge"):
                why_not = self._replace(held, held_lease)
            self.faults.reached("replaced")
            if why_not is None:
                self.report.say("--full-refresh: dropping staging, changes, progress and state")
                drop_bookkeeping(self.spark, self.tables)
                # the cycle after a replace has nothing to merge: the progress table that a
                # first build's cycle creates is created here, so that the next cycle with
                # changes makes a usual cycle's commits
                progress.ensure_table(self.spark, self.tables)
            else:
                cannot = "" if why_not == NO_MAIN else f" (it cannot be replaced: {why_not})"
                self.report.say(
                    f"--full-refresh: dropping main{cannot}, staging, changes, progress and state"
                )
                drop_all(self.spark, self.tables)
        finally:
            self.lease.forget()

    def _replace(self, held: tuple[Any, SchemaPlan], fenced: bool) -> str | None:
        """Main replaced with the ``held`` snapshot and its plan (``tables.replace_main``):
        None, or why not. The commit is tagged, and ``fenced`` by the lease when the run
        holds it."""
        spark, tables = self.spark, self.tables
        rows_held, plan = held
        refresh_id = self.lease.state.refresh_id if fenced else uuid.uuid4().hex
        tag = schema_tag(refresh_id)
        fence = (fence_app_id(tables.main), self.lease.fence()) if fenced else None
        with temp_view(rows_held, self.snapshot_view) as rows:
            why_not = replace_main(spark, tables, plan, self.config, rows, tag, fence)
        if why_not is not None:
            return why_not
        replaced = [c for c in recent_commits(spark, tables.main, 2) if c["userMetadata"] == tag]
        if not replaced:
            raise LeaseLostError(
                f"{tables.display} was not replaced: another run took the model's lock over "
                f"first (Delta skipped this run's fenced write). Nothing of this run's was "
                f"written; run it again once the other run is done."
            )
        metrics = replaced[-1]["operationMetrics"] or {}
        self._replaced_rows = int(metrics.get("numOutputRows", 0))
        self.report.say(
            f"--full-refresh: replaced main with the snapshot's {self._replaced_rows:,} rows "
            f"in one commit"
        )
        self.result.main_replaced = True
        return None

    def _skipped(self, snapshot: Callable[[], Any]) -> tuple[RefreshResult | None, Any]:
        """The result of a run that has nothing to do, reading the state row but taking no
        lease and committing nothing: the last cycle completed less than ``refresh_every``
        ago, or nothing it read changed since. None: refresh. Only a state at rest (IDLE)
        is skipped: a cycle to resume or recover always runs. With it, the state row as
        read (None: not read), for the lease to try first."""
        config = self.config
        may_skip_unchanged = config.skip_unchanged_inputs and self.sql is not None
        if config.refresh_every is None and not may_skip_unchanged:
            return None, None  # a Python model, or skipping is off: no state read
        state = self.lease.read()
        if state.current_phase is not Phase.IDLE or state.last_completed_at is None:
            return None, state
        if config.refresh_every is not None:
            due = state.last_completed_at + config.refresh_every
            if time.time() < due:
                when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(due))
                self.report.say(
                    f"refreshed at most every {config.refresh_every:.0f}s: due at {when}"
                )
                return self._skip_result(f"fresh, next due at {when}", state), state
        inputs = self._read_inputs(snapshot)
        if inputs is not None:
            recorded = Recorded.parse(state.last_inputs)
            reason = reason_to_refresh(self.spark, self.tables.main, recorded, inputs)
            if reason is None:
                self.report.say("nothing the model reads changed since the last cycle")
                return self._skip_result("inputs unchanged", state), state
            self.report.say(f"refreshing: {reason}")
        return None, state

    def _read_inputs(self, snapshot: Callable[[], Any]) -> Inputs | None:
        """What this run's snapshot reads (see ``inputs``), read once, before the snapshot
        is loaded; None when ``skip_unchanged_inputs`` is off or the engine cannot know."""
        if not self.config.skip_unchanged_inputs:
            return None
        if self._inputs is None:
            if self.sql is None:
                self._inputs = "a Python model's inputs cannot be checked"
            else:
                try:
                    frame = snapshot()
                    self._inputs = read_inputs(self.spark, frame, self.sql, self.config.to_dict())
                except Exception as error:  # the load meets it again, and reports it
                    self._inputs = f"its inputs could not be read ({message_of(error)[:300]})"
            if isinstance(self._inputs, str):
                self.report.say(f"refreshing every run: {self._inputs}")
        return self._inputs if isinstance(self._inputs, Inputs) else None

    def skip_for_empty(self) -> RefreshResult:
        """dbt's ``--empty`` (a schema-only run: every ref reads no rows) on a built main:
        a refresh would make main the empty snapshot, deleting every row, so main is kept
        and nothing is read or committed (``--full-refresh --empty`` rebuilds it empty)."""
        self.report.say("--empty: the model's refs read no rows; main is kept as it is")
        return self._skip_result("--empty: main kept")

    @staticmethod
    def _skip_result(why: str, state: Any = None) -> RefreshResult:
        return RefreshResult(
            message=f"SKIPPED ({why})",
            skipped=True,
            refresh_id=None if state is None else state.last_refresh_id,
        )

    def _reason_to_discard(self, cycle: LoadedCycle) -> str | None:
        """Why a cycle left to merge cannot be resumed, if it cannot: its merge already
        failed on resume, its vnode layout (an earlier version's) has bounds its chunks
        cannot slice main by, or main is not the table its change set was diffed against."""
        stored = cycle.plan
        if stored.failed_on_resume:
            return f"its merge failed on resume ({stored.failed_on_resume})"
        misread = VnodeLayout.from_json(stored.vnode_layout, cycle.vnodes).misread_bounds
        if misread:
            return f"its vnode bounds {misread} are dates Delta's file statistics misread"
        base_version = stored.base_version
        if base_version is None:
            return None  # main did not exist: the merge diffs again if someone created it
        if not table_exists(self.spark, self.tables.main):
            return "main was dropped after the cycle's diff"
        if stored.main_id not in (None, table_id(self.spark, self.tables.main)):
            return "main was replaced by another table after the cycle's diff"
        if main_version(self.spark, self.tables) < base_version:
            return f"main's history is older than the cycle's base version {base_version}"
        return None

    def _give_up(self, error: BaseException) -> str | None:
        """After a failure: hand the lease back so the next run can go on at once. Returns
        what the next run will do about a failed merge, for the error message."""
        guidance = None
        try:
            if self.lease.lost is not None:
                return None
            state = self.lease.state
            failure = {
                "message": message_of(error)[:2000] or type(error).__name__,
                "at": time.time(),
                "phase": state.phase,
                "refresh_id": state.refresh_id,
            }
            last_error = json.dumps(failure)
            if self._merging is not None:
                guidance, cycle = self._after_failed_merge(self._merging, error)
                fields = {**cycle.state_fields(), "last_error": last_error}
                if state.current_phase is Phase.FINISHING:
                    self.lease.release(**fields)
                else:  # the plan was only in the change set's commit: the state keeps it now
                    self.lease.transition(Phase.FINISHING, **fields, **RELEASED_OWNER)
            elif state.current_phase is Phase.REFRESHING and self.lease.holds():
                self.lease.transition(
                    Phase.IDLE, **CYCLE_FIELDS_CLEARED, **RELEASED_OWNER, last_error=last_error
                )
            else:
                self.lease.release(last_error=last_error)
        except Exception as exc:
            self.report.say(f"could not release the lock ({exc}); it expires after lock_timeout")
        finally:
            self.lease.forget()
        return guidance

    def _after_failed_merge(
        self, cycle: LoadedCycle, error: BaseException
    ) -> tuple[str | None, LoadedCycle]:
        """A merge failed or was stopped: the next run resumes it once; if the resume fails
        too, the run after it discards the cycle and loads a fresh snapshot. What to tell
        the user, and the cycle as the state is to keep it."""
        if isinstance(error, (RefreshCancelledError, KeyboardInterrupt)):
            return None, cycle  # its message says the next run resumes
        if not self.result.resumed:
            return (
                f"The merge of cycle {cycle.refresh_id} is checkpointed: the next `dbt run` "
                f"resumes it. If it fails the same way there, the run after that discards the "
                f"cycle and loads a fresh snapshot.",
                cycle,
            )
        return (
            f"The merge of cycle {cycle.refresh_id} failed again on resume. Fix the cause "
            f"above (the model, or a constraint or rows of {self.tables.display}); the next "
            f"`dbt run` discards this cycle and loads a fresh snapshot.",
            cycle.with_plan(failed_on_resume=first_line(error)),
        )

    # -- Refreshing ------------------------------------------------------------------
    def _load(self, snapshot: Callable[[], Any]) -> LoadedCycle:
        """Stage the snapshot, diff it against main and commit the cycle's plan: a cycle
        the next run can resume, or one with nothing to merge."""
        spark, tables, config = self.spark, self.tables, self.config
        refresh_id = self.lease.state.refresh_id
        with contextlib.ExitStack() as held:
            staged = self._stage(snapshot, held)
            layout = staged.layout
            with self.clock.measure("diff"):
                found = held.enter_context(self._change_set(staged))
                summary, counts = found.staged, found.counts
                self._refuse_bad_snapshot(staged, found)
                chunks = progress.plan_chunks(
                    counts.by_vnode(), layout.count, config.merge_chunk_rows
                )
            loaded = self._planned(refresh_id, staged, summary, counts, chunks)
            if not counts.total():  # nothing to resume: a crash before IDLE loads again
                self.report.say(f"staged {summary.rows:,} rows, none changed")
                return loaded
            with self.clock.measure("bookkeeping"):
                progress.ensure_table(spark, tables)
            if staged.base_version is None:  # a first build: staging is the change set
                with self.clock.measure("bookkeeping"):
                    self.lease.transition(Phase.FINISHING, **loaded.state_fields())
                where = "a move to FINISHING"
            else:
                with self.clock.measure("fetch"):
                    with engine_commit(spark, loaded.changes_tag()):
                        found.write(files=len(chunks))
                    loaded = self._as_committed(loaded)
                where = "the change set's commit"
        self.report.say(
            f"staged {summary.rows:,} rows, {counts.total():,} changed; staging and the change "
            f"set are whole (the cycle's plan is in {where})"
        )
        self.faults.reached("finishing")
        return loaded

    @contextlib.contextmanager
    def _change_set(self, staged: Staged) -> Iterator[diff.ChangeSet]:
        """The cycle's change set (``diff.change_set``), held until the block ends; whether
        the diff read main or skipped is recorded in the run's result."""
        with diff.change_set(
            self.spark,
            self.tables,
            staged.plan,
            staged.layout,
            staged.base_version,
            staged.index,
            staged.staged_rows,
            staged.written,
        ) as found:
            if found.index_refused is not None:
                self.report.say(f"diffing against all of main: {found.index_refused}")
            read_index = staged.index is not None and found.index_refused is None
            self.result.diff_read_main = staged.main_exists and not read_index
            self.result.diff_skipped = not found.diffed
            yield found

    def _refuse_bad_snapshot(self, staged: Staged, found: diff.ChangeSet) -> None:
        """Refuse a snapshot the merge must not apply, before main is touched: NULL or
        duplicate keys, rows breaking a CHECK constraint or main's partitioning, deletes
        past the guards."""
        spark, tables, config, plan = self.spark, self.tables, self.config, staged.plan
        summary, counts = found.staged, found.counts
        load.refuse_null_keys(spark, tables, plan.keys, summary)
        load.check_constraints(spark, tables, config.constraints, staged.main_checks)
        load.refuse_lost_partition_values(spark, tables, staged.partition_columns, plan.schema)
        found.refuse_bad_keys()
        load.check_delete_guards(tables, config, summary, counts.total("I"), counts.total("D"))

    @staticmethod
    def _planned(
        refresh_id: str,
        staged: Staged,
        summary: load.StagedSnapshot,
        counts: diff.ChangeCounts,
        chunks: list[progress.Chunk],
    ) -> LoadedCycle:
        """The cycle's plan: what its chunks merge, against which versions, and what the
        cycle read."""
        layout = staged.layout
        return LoadedCycle(
            refresh_id,
            layout.count,
            summary.rows,
            summary.checksum,
            CyclePlan(
                schema_plan=staged.plan.to_json(),
                base_version=staged.base_version,
                main_id=staged.main_id,
                staging_version=staged.staging_version,
                changes_version=None,
                chunks=tuple(chunks),
                changes=counts.per_vnode,
                vnode_rows=tuple(summary.vnode_rows.get(v, 0) for v in range(layout.count)),
                vnode_layout=layout.to_json(),
                inputs=None if staged.inputs is None else staged.inputs.to_json(),
            ),
        )

    def _stage(self, snapshot: Callable[[], Any], held: contextlib.ExitStack) -> Staged:
        """The snapshot written to staging under the cycle's schema plan and vnode layout;
        main as one read of its log found it before the load: the version the diff reads
        (a later commit of another writer's is found by the chunks, which diff again).
        The main index's view of staging lasts as long as ``held``."""
        spark, tables, config = self.spark, self.tables, self.config
        with self.clock.measure("load"):
            detail = main_detail(spark, tables)
            refuse_another_models_location(spark, tables, config, detail)
            main_exists = detail is not None
            inputs = self._read_inputs(snapshot)  # before the snapshot reads them
            self.report.say(
                f"loading the snapshot into staging (cycle {self.lease.state.refresh_id})"
            )
            frame = as_spark_frame(spark, snapshot())
            plan = load.plan_for(spark, frame, tables, config, detail)
            frame = load.spelled_as_planned(frame, plan)
            self._check_layout(plan, detail)
            layout = choose_layout(frame, plan.keys, config.vnodes, self._previous_layout())
            index = held.enter_context(
                diff.pinned_index(
                    spark, tables, self._main_index(plan, layout, detail), self.index_view
                )
            )
            kept = self._staging_kept(frame, plan, layout, index)
            if kept is None:
                last_rows = None if index is None else index.rows
                written = load.write_staging(frame, tables, plan, layout, last_rows)
                staging_version, staged_rows = written_by_newest_commit(spark, tables.staging)
            else:
                written, staging_version, staged_rows = kept
            self.faults.reached("loading")
            base_version = None if detail is None else detail.version
            self._main_files = (
                MainFiles(0, 0) if detail is None else MainFiles(detail.files, detail.size_bytes)
            )
        return Staged(
            plan,
            layout,
            staging_version,
            staged_rows,
            written,
            main_exists,
            base_version,
            None if detail is None else detail.id,
            index,
            inputs,
            {} if detail is None else detail.own_checks,
            list(config.partition_by) if detail is None else detail.partition_columns,
        )

    def _staging_kept(
        self,
        frame: Any,
        plan: SchemaPlan,
        layout: VnodeLayout,
        index: diff.MainIndex | None,
    ) -> tuple[load.StagedTotals, int, int | None] | None:
        """Staging left unwritten where it already holds the snapshot: main holds the last
        completed snapshot (``index``, pinned: the same columns hashed the same way, and no
        type changes but by ``--full-refresh``, after which main is diffed by its rows),
        the snapshot, summed in a job that writes nothing, has its rows and checksum
        (:meth:`diff.MainIndex.is_snapshot_of`, the criterion that lets the diff skip), and
        staging's newest version is still that snapshot's. Then: the snapshot's totals,
        staging's version and the rows its commit wrote; None: staging is written. The rows
        are counted first, and summed only where they are the last snapshot's: a cycle with
        changes pays one more evaluation of the model (a count of it, where rows came or
        went), and one without them saves the write of staging
        (bench/results/history/2026-12-07-checksum-before-the-load.md)."""
        if index is None or index.view is None or frame.count() != index.rows:
            return None  # counted first: a Parquet source's count reads no column
        totals = load.staged_totals(load.as_staged(frame, plan, layout), plan.keys)
        if not index.is_snapshot_of(totals):
            return None
        version, rows = written_by_newest_commit(self.spark, self.tables.staging)
        if version != index.staging_version:  # written since: it is rewritten
            return None
        self.report.say(
            f"the snapshot has the last cycle's {totals.rows:,} rows and checksum: staging "
            f"already holds it (version {version}) and is not rewritten"
        )
        self._kept_staging = True
        return totals, version, rows

    def _previous_layout(self) -> VnodeLayout | None:
        """The last completed cycle's vnode layout for this one to keep, if it recorded one
        and its range bounds still spread the keys as well as when they were cut: bounds
        that were skewed from the start (a first key column of few values) are kept, since
        cutting them again would give the same skew and cost a diff against all of main."""
        last = LastSnapshot.parse(self.lease.state.last_columns)
        previous = None if last is None else last.layout()
        if last is None or previous is None:
            return None
        chunk_rows = self.config.merge_chunk_rows
        why = previous.skewed(last.vnode_rows, chunk_rows)
        if why is not None and previous.skewed(last.vnode_rows_at_cut, chunk_rows) is None:
            self.report.say(
                f"cutting the range vnodes' bounds again ({why}); where they move, this "
                f"cycle diffs against all of main"
            )
            return None
        return previous

    def _as_committed(self, loaded: LoadedCycle) -> LoadedCycle:
        """The cycle as the change set's commit just written carries it, with that commit's
        version (which the chunks read): what a resume would find."""
        committed = committed_cycle(self.spark, self.tables, loaded.refresh_id)
        if committed is None:  # rewritten more than PLAN_SEARCH times since: not by us
            raise LeaseLostError(
                f"{self.tables.changes} was rewritten by other runs right after this run wrote "
                f"its change set; this run stopped before merging anything. Run it again."
            )
        return committed

    # -- Merging ---------------------------------------------------------------------
    def _merge_and_clean_up(self, loaded: LoadedCycle, cycle: Cycle) -> None:
        """Merge ``loaded`` (``cycle`` read from its plan) chunk by chunk from where it
        stands, record it complete (IDLE) and compact main."""
        self._merging = loaded if loaded.plan.chunks else None  # else nothing to resume
        chunks = list(loaded.plan.chunks)
        vnode_rows = dict(enumerate(loaded.plan.vnode_rows))
        with self.clock.measure("merge"):
            create_or_evolve_main(
                self.spark,
                self.tables,
                cycle.plan,
                self.config,
                tag=schema_tag(loaded.refresh_id),
                before_alter=self.lease.ensure_held,  # no state commit since the lease's
            )
        with self.clock.measure("bookkeeping"):
            main_as_merged = self._main_as_merged(loaded.plan)
            history = MainHistory.since(self.spark, self.tables, loaded.plan.base_version)
            done = self._chunks_done(loaded, chunks, history)
        # the change set is exact while main holds no commit but this cycle's
        current = history.latest if history.only_cycle(loaded.refresh_id) else None
        counts, current = self._merge_chunks(loaded, cycle, chunks, done, vnode_rows, current)
        r = self.result
        r.refresh_id, r.chunks_total = loaded.refresh_id, len(chunks)
        # a --full-refresh's replace inserted the snapshot's rows before this cycle
        r.rows_inserted = self._replaced_rows + counts["I"]
        r.rows_updated, r.rows_deleted = counts["U"], counts["D"]
        r.rows_unchanged = max(0, loaded.snapshot_rows - r.rows_inserted - r.rows_updated)
        if self.config.constraints:
            with (
                self.clock.measure("merge"),
                engine_commit(self.spark, schema_tag(loaded.refresh_id)),
            ):
                add_contract_constraints(self.spark, self.tables.main, self.config.constraints)
        self.faults.reached("merged")
        # main equals the snapshot at ``current``, if the change set stayed exact throughout
        main_left = None if current is None else VerifiedMain(*main_as_merged, current)
        with self.clock.measure("bookkeeping"):
            self.lease.transition(Phase.IDLE, **self._completed(loaded, cycle, main_left))
        self._merging = None
        if any(counts.values()):  # the cycle's chunks added files to main
            # main's files are known while it holds nothing but this cycle's commits
            self._compact_main(self._main_files if current is not None else None)
            # a size the catalog keeps for main (see there) renewed with the cycle's files
            forget_catalog_size(self.spark, self.tables.main)
        self._vacuum_scratch_tables(cycle)

    def _cycle_of(self, loaded: LoadedCycle) -> Cycle:
        """What every chunk of ``loaded`` merges with, as its plan says."""
        stored = loaded.plan
        return Cycle(
            self.tables,
            self._stored_schema_plan(stored.schema_plan),
            VnodeLayout.from_json(stored.vnode_layout, loaded.vnodes),
            stored.base_version is None,
            stored.changes,
            stored.staging_version,
            stored.changes_version,
        )

    def _chunks_done(
        self,
        loaded: LoadedCycle,
        chunks: list[progress.Chunk],
        history: MainHistory,
    ) -> progress.Checkpoint:
        """The chunks of ``loaded`` already merged: none of a cycle this run loaded; of a
        resumed one, those its checkpoint records and those main's history shows committed
        after it."""
        if not self.result.resumed:
            return progress.Checkpoint(frozenset())
        done = progress.read_checkpoint(self.spark, self.tables, loaded.refresh_id)
        self._checkpoints_written = bool(done.chunks)
        return self._reconcile_with_main(loaded, chunks, done, history)

    def _merge_chunks(
        self,
        loaded: LoadedCycle,
        cycle: Cycle,
        chunks: list[progress.Chunk],
        done: progress.Checkpoint,
        vnode_rows: dict[int, int],
        current: int | None,
    ) -> tuple[dict[str, int], int | None]:
        """Merge the chunks not ``done``, each in its commit; the cycle's counts (op ->
        rows) and main's version that holds exactly the snapshot (None: unknown)."""
        counts = done.counts()
        pending = [c for c in chunks if c.index not in done.chunks]
        rows_done = sum(c.rows for c in chunks if c.index in done.chunks)
        rows_total = sum(c.rows for c in chunks)
        self.report.merge_started(len(chunks), len(done.chunks), rows_total, rows_done)
        merge_started = self._recorded_at = time.monotonic()
        for chunk in pending:
            self._check_may_continue(
                merge_started, lambda: self._checkpoint(loaded.refresh_id, vnode_rows)
            )
            merged = self._merge_chunk(loaded, cycle, chunk, current)
            current = merged.current
            # a chunk that changed nothing needs no checkpoint, nor does the last: the
            # move to IDLE follows; the others are recorded once checkpoint_interval has
            # passed, and a crash before finds them in main's history
            if merged.per_vnode and chunk is not pending[-1]:
                self._unrecorded.append(
                    progress.MergedChunk(chunk, merged.per_vnode, merged.main_version)
                )
                if time.monotonic() - self._recorded_at >= self.config.checkpoint_interval:
                    with self.clock.measure("bookkeeping"):
                        self._checkpoint(loaded.refresh_id, vnode_rows)
            self.faults.reached("chunk_done")
            self.result.chunks_done += 1
            for op in counts:
                counts[op] += merged.total(op)
            rows_done += chunk.rows
            self.report.chunk_done(rows_done, sum(counts.values()))
        return counts, current

    def _merge_chunk(
        self, loaded: LoadedCycle, cycle: Cycle, chunk: progress.Chunk, current: int | None
    ) -> ChunkResult:
        """One chunk's ``MERGE``: one commit of main, tagged with the cycle and chunk and
        fenced by the lease (a no-op once another run took the lease over)."""
        main_bytes = None if self._main_files is None else self._main_files.size_bytes
        with self.clock.measure("merge"):
            merged = merge_chunk(
                self.spark,
                cycle,
                chunk,
                self.view,
                lambda tag=chunk_tag(loaded.refresh_id, chunk.index): engine_commit(
                    self.spark,
                    tag,
                    (fence_app_id(self.tables.main), self.lease.fence()),
                    chunk_write_settings(main_bytes),
                ),
                current,
                self.lease.ensure_held,
            )
        if self._main_files is not None and merged.commit_metrics is not None:
            self._main_files = self._main_files.after(merged.commit_metrics)
        self.faults.reached("chunk_committed")
        return merged

    def _completed(
        self, loaded: LoadedCycle, cycle: Cycle, main_left: VerifiedMain | None
    ) -> dict[str, Any]:
        """The state row's fields once ``loaded`` is merged: the cycle's fields cleared, the
        owner released, and the record of the completed cycle (its counts, the snapshot's
        summary and schema, and what its inputs were when main equalled it)."""
        r, stored = self.result, loaded.plan
        last_result = {
            "inserted": r.rows_inserted,
            "updated": r.rows_updated,
            "deleted": r.rows_deleted,
            "unchanged": r.rows_unchanged,
            "chunks": r.chunks_total,
            "resumed": r.resumed,
            "seconds": round(time.monotonic() - self.started, 1),
        }
        recorded_inputs = None
        if main_left is not None and stored.inputs is not None:
            recorded_inputs = Recorded(Inputs.from_json(stored.inputs), main_left).to_json()
        vnode_rows = stored.vnode_rows
        previous = LastSnapshot.parse(self.lease.state.last_columns)
        kept = previous is not None and previous.layout() == cycle.layout
        last_snapshot = LastSnapshot(
            cycle.plan.schema,
            stored.staging_version,
            main_left,
            cycle.plan.keys,
            cycle.layout.vnodes,
            cycle.layout.to_json(),
            vnode_rows,
            previous.vnode_rows_at_cut if previous is not None and kept else vnode_rows,
        )
        return {
            **CYCLE_FIELDS_CLEARED,
            **RELEASED_OWNER,
            "last_refresh_id": loaded.refresh_id,
            "last_result": json.dumps(last_result),
            "last_completed_at": time.time(),
            "last_rows": loaded.snapshot_rows,
            "last_checksum": loaded.snapshot_checksum,
            "last_columns": json.dumps(last_snapshot.to_json()),
            "last_inputs": recorded_inputs,
        }

    def _compact_main(self, known: MainFiles | None) -> None:
        """Compact main after a completed cycle (see ``compaction``); a failure is reported,
        not raised: the refresh is complete, and a later one tries again."""
        self.faults.reached("compacting")
        with self.clock.measure("bookkeeping"):
            try:
                with SESSION_CONF_LOCK:  # no chunk's tag or fence from the session on it
                    done = compact_main(
                        self.spark, self.tables.main, self.config.compact_after_files, known
                    )
            except Exception as error:
                self.report.say(f"main was not compacted: {message_of(error)[:300]}")
                return
        if done is not None:
            self.result.main_compacted = [done.files_before, done.files_after]
            under = done.small_under_bytes
            which = (
                ""
                if under is None
                else f" (files under {under:,} bytes, and files with many deleted rows)"
            )
            self.report.say(
                f"compacted main{which}: {done.files_before} files -> {done.files_after}"
            )

    def _vacuum_scratch_tables(self, cycle: Cycle) -> None:
        """Free the files of staging's and the change set's old versions, when due, after a
        completed cycle (see ``scratch_vacuum``); a failure is reported, not raised."""
        due = [
            (role, shown)
            for role, shown, version in (
                # kept, staging is at the version an earlier cycle left (and vacuumed)
                ("staging", "staging", None if self._kept_staging else cycle.staging_version),
                ("changes", "the change set", cycle.changes_version),
            )
            if scratch_vacuum.is_due(version)
        ]
        if not due:
            return
        self.faults.reached("vacuuming")
        vacuumed: dict[str, int] = {}
        with self.clock.measure("bookkeeping"):
            for role, shown in due:
                name = self.tables.role_name(role)
                try:
                    with SESSION_CONF_LOCK:  # no chunk's tag or fence from the session on it
                        vacuumed[role] = scratch_vacuum.vacuum_scratch_table(self.spark, name)
                except Exception as error:
                    self.report.say(f"{shown} was not vacuumed: {message_of(error)[:300]}")
                    continue
                self.report.say(
                    f"vacuumed {shown}: {vacuumed[role]:,} files of its old versions deleted"
                )
        self.result.scratch_vacuumed = vacuumed or None

    def _check_layout(self, plan: SchemaPlan, main_detail: MainDetail | None) -> None:
        """Refuse a partition_by or clustering main could not be created with, or a plan that
        drops a column of main's layout, before the load writes anything; say so when an
        existing main's layout differs from the config."""
        if main_detail is None:
            layout_columns(plan, self.config)
            return
        refuse_dropping_layout_columns(plan, main_detail)
        if self.config.partition_by or self.config.cluster_by or self.config.location_root:
            location = main_location(self.tables, self.config)
            drift = layout_drift(main_detail, self.config, location)
            if drift is not None:
                self.report.say(f"main keeps its layout: {drift}")

    def _main_as_merged(self, stored: CyclePlan) -> tuple[str, str]:
        """Main's table id (as the cycle's load found it, or as this cycle created it) and
        schema, read before the cycle's history is checked, for the record of what the
        cycle left main equal to."""
        main = self.tables.main
        return stored.main_id or table_id(self.spark, main), main_schema(self.spark, main)

    def _main_index(
        self,
        plan: SchemaPlan,
        layout: VnodeLayout,
        main_detail: MainDetail | None,
    ) -> diff.MainIndex | None:
        """Main's keys and row hashes as the last completed snapshot left them in staging,
        when main still holds exactly that snapshot: the cycle that loaded it verified main
        equal to it, main is the same table with the same columns, every commit since
        changed no row, and this cycle hashes the same columns with the same keys and
        vnode layout. None: the diff reads main. The diff then checks that staging's old
        version still holds that snapshot (``MainIndex.mismatch``), in its own job."""
        state = self.lease.state
        last = LastSnapshot.parse(state.last_columns)
        if main_detail is None or last is None or last.main is None:
            return None
        same_hashes = (
            last.keys == plan.keys
            and last.layout() == layout
            and row_hash_expression(last.schema) == row_hash_expression(plan.schema)
        )
        if not same_hashes or plan.add or plan.drop:
            return None
        why = last.main.why_changed(
            self.spark, self.tables.main, main_detail.id, main_detail.version
        )
        if why is None:
            return diff.MainIndex(
                last.staging_version, state.last_rows, state.last_checksum, last.vnode_rows
            )
        self.report.say(f"diffing against all of main: {why}")
        return None

    def _stored_schema_plan(self, stored: dict[str, Any]) -> SchemaPlan:
        """The schema plan of a cycle left to merge. A cycle staged by a version that
        stored no types gets them from staging, which holds every planned column."""
        if "schema" not in stored:
            staged = {fold_name(f.name): f for f in self.spark.table(self.tables.staging).schema}
            by_fold = {fold_name(name): name for name in stored["columns"]}
            schema = StructType(
                [StructField(name, staged[fold_name(name)].dataType) for name in stored["columns"]]
            )
            stored = {
                **stored,
                "schema": schema.jsonValue(),
                "keys": [by_fold[fold_name(k)] for k in stored["keys"]],
            }
        return SchemaPlan.from_json(stored)

    def _reconcile_with_main(
        self,
        loaded: LoadedCycle,
        chunks: list[progress.Chunk],
        done: progress.Checkpoint,
        history: MainHistory,
    ) -> progress.Checkpoint:
        """``done`` and the chunks whose main commit landed but whose checkpoint did not (a
        crash in between), from main's history. Like the chunks this run merges, they are
        recorded with the cycle's next checkpoint, and until then their commits in main's
        history stand for them, where another resume finds them again: the resume neither
        writes progress nor reads it again before its merge. Their counts go on their first
        vnode."""
        committed = history.committed_chunks(loaded.refresh_id)
        missing = [c for c in chunks if c.index in committed and c.index not in done.chunks]
        if not missing:
            return done
        totals = done.counts()
        for chunk in missing:
            version, counts = committed[chunk.index]
            per_vnode = {op: {chunk.first_vnode: n} for op, n in counts.items()}
            self._unrecorded.append(progress.MergedChunk(chunk, per_vnode, version))
            for op in totals:
                totals[op] += counts[op]
        listed = ", ".join(str(c.index) for c in missing)
        self.report.say(f"chunk(s) {listed} committed to main before the run stopped")
        merged = done.chunks | {c.index for c in missing}
        return progress.Checkpoint(merged, totals["I"], totals["U"], totals["D"])

    def _checkpoint(self, refresh_id: str, vnode_rows: dict[int, int]) -> None:
        """Record the merged chunks not yet in the progress table, in one commit; the
        cycle's first record replaces the previous cycles' rows."""
        if self._unrecorded:
            progress.record_chunks(
                self.spark,
                self.tables,
                refresh_id,
                self._unrecorded,
                vnode_rows,
                first_of_cycle=not self._checkpoints_written,
            )
            self._checkpoints_written = True
            self._unrecorded = []
        self._recorded_at = time.monotonic()

    def _check_may_continue(self, merge_started: float, checkpoint: Callable[[], None]) -> None:
        """Between chunks: honour cancellation and the time budget (recording the merged
        chunks first, with ``checkpoint``), and a lease the heartbeat found lost. The lease
        is not read here: a chunk's MERGE is fenced, a no-op once another run took over,
        and a no-op makes the chunk check the lease (merge_chunk)."""
        cancelled = self.job is not None and self.job.cancelled.is_set()
        budget = self.config.merge_time_budget
        over_budget = budget is not None and time.monotonic() - merge_started > budget
        if (cancelled or over_budget) and self.lease.lost is None:
            with self.clock.measure("bookkeeping"), contextlib.suppress(Exception):
                checkpoint()  # if it fails, a resume finds the chunks in main's history
        if cancelled:
            raise RefreshCancelledError(
                f"{self.tables.display}: cancelled between chunks; the merge is checkpointed "
                f"and the next `dbt run` resumes it."
            )
        if over_budget:
            raise RefreshCancelledError(
                f"{self.tables.display}: merge_time_budget of {budget:.0f}s used up after "
                f"{self.result.chunks_done} chunk(s); the merge is checkpointed and the "
                f"next `dbt run` resumes it."
            )
        if self.lease.lost is not None:
            raise LeaseLostError(self.lease.lost)

    def _result(self) -> RefreshResult:
        r, seconds = self.result, self.clock.seconds
        verb = "RESUMED" if r.resumed else "REPLACED" if r.main_replaced else "REFRESHED"
        r.message = (
            f"{verb} +{r.rows_inserted} ~{r.rows_updated} -{r.rows_deleted} "
            f"={r.rows_unchanged} in {r.chunks_done}/{r.chunks_total} chunk(s)"
        )
        r.seconds_load = round(seconds["load"], 3)
        r.seconds_diff = round(seconds["diff"], 3)
        r.seconds_fetch = round(seconds["fetch"], 3)
        r.seconds_merge = round(seconds["merge"], 3)
        r.seconds_bookkeeping = round(seconds["bookkeeping"], 3)
        return r
