"""Main's layout and properties from the configs dbt-spark and dbt-databricks users write:
`partition_by`, liquid clustering (`liquid_clustered_by` / `cluster_by`), `tblproperties` and
`location_root` are on main after the first refresh, after a second one, and after a
crashed cycle's resume; a layout main cannot have is refused before anything is written;
Spark's planner sizes main as it is, not as it was created."""

from __future__ import annotations

import datetime as dt
import os
import random
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from dbt.adapters.spark_refreshable.engine import tables
from dbt.adapters.spark_refreshable.engine.commits import session_confs
from dbt.adapters.spark_refreshable.engine.errors import (
    ConfigError,
    InjectedFault,
    SchemaChangeError,
    SnapshotRejectedError,
)
from dbt.adapters.spark_refreshable.engine.load import LOST_PARTITION_VALUES, UTC_PARTITION_VALUES
from dbt.adapters.spark_refreshable.engine.naming import ModelTables
from dbt.adapters.spark_refreshable.engine.tables import table_exists
from tests.functional.refreshable.engine_harness import EngineModel, record_messages
from tests.support.content import content_problems
from tests.support.faults import injected

DDL = "id INT, region STRING, value STRING"
DAY1 = [(i, f"r{i % 3}", f"one {i}") for i in range(30)]
DAY2 = [(i, f"r{i % 3}", f"two {i}" if i % 2 else f"one {i}") for i in range(10, 40)]
DAY3 = [(i, f"r{i % 4}", f"three {i}") for i in range(20, 50)]


def detail(model: EngineModel) -> Any:
    return model.spark.sql(f"DESCRIBE DETAIL {model.tables.main}").collect()[0]


def properties(model: EngineModel) -> dict[str, str]:
    rows = model.spark.sql(f"SHOW TBLPROPERTIES {model.tables.main}").collect()
    return {r["key"]: r["value"] for r in rows}


def crash_then_resume(model: EngineModel, rows: list[tuple]) -> None:
    """A cycle that crashes after its first chunk (of two or three), and the run that
    resumes it."""
    with injected("chunk_done@1:raise"), pytest.raises(InjectedFault):
        model.refresh(rows, merge_chunk_rows=15)
    assert model.refresh(rows).resumed is True


@pytest.mark.parametrize(
    ("config", "field", "expected"),
    [
        ({"partition_by": "region"}, "partitionColumns", ["region"]),
        ({"liquid_clustered_by": ["REGION", "id"]}, "clusteringColumns", ["region", "id"]),
        # `cluster_by` is read as liquid_clustered_by (tests/unit/test_spec.py)
        pytest.param({"cluster_by": "id"}, "clusteringColumns", ["id"], marks=pytest.mark.extended),
    ],
)
def test_layout_stays_through_refreshes_and_a_resume(spark, config, field, expected):
    model = EngineModel(spark, DDL, unique_key="id", **config)
    for refresh in (
        lambda: model.refresh(DAY1),
        lambda: model.refresh(DAY2),
        lambda: crash_then_resume(model, DAY3),
    ):
        refresh()
        assert list(detail(model)[field]) == expected
    assert model.main() == sorted(DAY3)


def test_tblproperties_are_set_changed_and_kept(spark):
    model = EngineModel(
        spark, DDL, unique_key="id", tblproperties={"team": "sales", "delta.appendOnly": False}
    )
    model.refresh(DAY1)
    found = properties(model)
    assert found["team"] == "sales" and found["delta.appendOnly"] == "false"
    assert found["delta.enableDeletionVectors"] == "true", "the engine's own stay"
    model.config["tblproperties"] = {"team": "finance"}
    model.refresh(DAY2)
    assert properties(model)["team"] == "finance"
    version = model.version()
    model.refresh(DAY2)  # nothing changed: neither rows nor properties, no commit
    assert model.version() == version
    crash_then_resume(model, DAY3)
    assert properties(model)["team"] == "finance" and model.main() == sorted(DAY3)


def catalog(spark: Any) -> Any:
    return spark._jsparkSession.sessionState().catalog()


def catalog_entry(spark: Any, name: str) -> Any:
    """The session catalog's identifier of table ``name`` and its metadata."""
    table = spark._jsparkSession.sessionState().sqlParser().parseTableIdentifier(name)
    return table, catalog(spark).getTableMetadata(table)


def planned_bytes(model: EngineModel, by_path: bool = False) -> int:
    """Main's size as Spark's planner takes it (what decides whether a join broadcasts it);
    ``by_path``: read by its location, as Delta alone sizes it, with no catalog entry."""
    spark = model.spark
    if by_path:
        frame = spark.read.format("delta").load(detail(model)["location"])
    else:
        frame = spark.table(model.tables.main)
    return int(str(frame._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()))


def test_main_is_planned_at_its_size_also_when_an_older_version_created_it(spark):
    """Spark stores a CREATE TABLE AS SELECT's size in the catalog and never updates it: a
    main created so (as up to 0.2.0, from an empty select) was planned at a few hundred
    bytes however large it grew, and every MERGE broadcast it whole."""
    model = EngineModel(spark, DDL, unique_key="id")
    model.refresh(DAY1)
    assert catalog_entry(spark, model.tables.main)[1].stats().isEmpty(), "none at creation"
    assert planned_bytes(model) == planned_bytes(model, by_path=True) > 0
    # as such a main was: the size of an empty table, frozen in the catalog
    frozen = f"{model.tables.schema}.{model.tables.identifier}_frozen_size"
    spark.sql(f"CREATE TABLE {frozen} USING parquet AS SELECT 1 AS id WHERE false")
    spark.sql(f"ANALYZE TABLE {frozen} COMPUTE STATISTICS NOSCAN")  # as a metastore's CTAS
    table, _ = catalog_entry(spark, model.tables.main)
    catalog(spark).alterTableStats(table, catalog_entry(spark, frozen)[1].stats())
    assert planned_bytes(model) < planned_bytes(model, by_path=True), "the frozen size"
    model.refresh(DAY2)
    # no size below main's: the catalog's, if the metastore keeps one, is its folder's files
    assert planned_bytes(model) >= planned_bytes(model, by_path=True)
    assert model.main() == sorted(DAY2)


@pytest.mark.parametrize(
    ("ddl", "config", "message"),
    [
        (DDL, {"partition_by": "zone"}, r"partition_by names column\(s\) \['zone'\]"),
        (DDL, {"cluster_by": ["id", "nope"]}, r"liquid_clustered_by names column\(s\) \['nope'\]"),
        (
            "id INT, region STRUCT<a: INT>, value STRING",
            {"partition_by": "region"},
            r"\['region \(STRUCT<`a`: int>\)'\] of a nested type",
        ),
    ],
)
def test_a_layout_main_cannot_have_is_refused_before_anything_is_written(
    spark, ddl, config, message
):
    model = EngineModel(spark, ddl, unique_key="id", **config)
    rows = [(1, (1,), "x")] if "STRUCT" in ddl else DAY1
    with pytest.raises(ConfigError, match=message):
        model.refresh(rows)
    assert not table_exists(spark, model.tables.main)
    assert not table_exists(spark, model.tables.staging)
    assert model.state().phase == "IDLE"


def test_a_partition_value_delta_would_read_back_as_null_is_refused_before_main_is_touched(
    spark,
):
    """A STRING partition column's values go into file paths: Delta keeps most of them
    (slashes, `=`, `%`, emoji, spaces, new lines) but reads an empty string and Hive's name
    of the NULL partition back as NULL, and bytes that are not UTF-8 text (in a STRING or
    BINARY column) changed. Such a snapshot is refused, on the first build and later, and
    main keeps what it held; the partition values of the others are main's as written.
    Values drawn by REFRESHABLE_TEST_SEED."""
    rng = random.Random(int(os.environ.get("REFRESHABLE_TEST_SEED", "20261203")))
    pieces = ["a", "Z", " ", "/", "=", "%", "%2F", ".", "..", "\n", "😀", "é", ":", "'", "__"]
    values = [None, " "] + ["".join(rng.choices(pieces, k=rng.randint(1, 4))) for _ in range(8)]
    values = [v for v in values if v not in LOST_PARTITION_VALUES]
    kept = [(i, v, f"v{i}") for i, v in enumerate(values)]

    def refused(model: EngineModel, rows: list[tuple], lost: str) -> None:
        with pytest.raises(SnapshotRejectedError) as raised:
            model.refresh(rows)
        message = str(raised.value)
        assert "partitioning by `region`" in message and "nullif(`region`, '')" in message
        assert repr(lost) in message and "Main was not touched" in message, message

    first = EngineModel(spark, DDL, unique_key="id", partition_by="region")
    refused(first, [*kept, (99, "", "empty")], "")
    assert not table_exists(spark, first.tables.main)

    model = EngineModel(spark, DDL, unique_key="id", partition_by="region")
    model.refresh(kept)
    assert not list(content_problems(spark, model.tables.main, model.frame(kept), 1)), values
    version = model.version()
    for lost in LOST_PARTITION_VALUES:
        changed = [(i, lost if i == 1 else v, w) for i, v, w in kept]
        refused(model, changed, lost)
        assert model.version() == version
    # bytes that are not UTF-8 text, which a path would hold as U+FFFD
    with pytest.raises(SnapshotRejectedError, match="not UTF-8 text"):
        model.refresh("SELECT 1 AS id, CAST(X'FF41' AS STRING) AS region, 'x' AS value")
    assert model.version() == version
    binary = EngineModel(spark, "id INT, region BINARY, value STRING", partition_by="region")
    for lost in ("X''", "X'FF41'"):
        with pytest.raises(SnapshotRejectedError, match="partitioning by `region`"):
            binary.refresh(f"SELECT 1 AS id, {lost} AS region, 'x' AS value", unique_key="id")
        assert not table_exists(spark, binary.tables.main)
    assert not list(content_problems(spark, model.tables.main, model.frame(kept), 1))


def drawn_name(rng: random.Random) -> str:
    """A column name of letters, spaces, accents, emoji (outside Unicode's BMP), dots and
    backticks."""
    pieces = ["a", "Z", " ", "é", "😀", "🔑", ".", "`", "_", "1", "ß"]
    return "a" + "".join(rng.choices(pieces, k=rng.randint(1, 5)))


TIME_ZONE = "spark.sql.session.timeZone"
# zones whose clocks are set back (by an hour, or by half an hour at Lord Howe Island)
FALL_BACK_ZONES = ["America/New_York", "Europe/Berlin", "Australia/Lord_Howe", "America/Santiago"]


def repeated_local_time(zone: ZoneInfo, instant: int) -> bool:
    """Whether the clock of ``zone`` shows the local time of ``instant`` (seconds) twice
    and ``instant`` is the second: that local time read back is another instant."""
    local = dt.datetime.fromtimestamp(instant, zone).replace(tzinfo=None)
    return local.replace(tzinfo=zone, fold=0).timestamp() != instant


def test_a_timestamp_partition_value_the_clock_shows_twice_is_refused(spark):
    """A TIMESTAMP partition column's values go into file paths as the session's local
    time: an instant in the hour the clock repeats when it is set back came back as the
    hour's first instant (main served 05:30 UTC for a snapshot's 06:30 UTC, and the row
    hashes said it was equal). Such a snapshot is refused, on the first build and later, and
    main keeps what it held; every other instant is main's as written, read in any time
    zone. Instants drawn (REFRESHABLE_TEST_SEED) from hours around each zone's transitions
    and from 1900-2100, their fate told by Python's time zone database."""
    rng = random.Random(int(os.environ.get("REFRESHABLE_TEST_SEED", "20261203")))
    zone = rng.choice(FALL_BACK_ZONES)
    tz = ZoneInfo(zone)
    first_repeated = [  # each first instant whose local time comes again, 2024-2026
        t
        for t in range(1704067200, 1798761600, 1800)
        if repeated_local_time(tz, t) and not repeated_local_time(tz, t - 1800)
    ]
    near = [t + rng.randrange(-5400, 5400) for t in first_repeated for _ in range(4)]
    near += [t + rng.randrange(0, 1800) for t in first_repeated]  # in a repeated time
    anywhere = [rng.randrange(-2208988800, 4102444800) for _ in range(20)]
    drawn = sorted(set(near + anywhere))
    lost = [i for i in drawn if repeated_local_time(tz, i)]
    kept = [i for i in drawn if not repeated_local_time(tz, i)]
    assert lost and kept, (zone, drawn)

    def snapshot(instants: list[int]) -> str:
        rows = ", ".join(f"({n}, {i})" for n, i in enumerate(instants))
        return (
            "SELECT CAST(n AS INT) AS id, timestamp_seconds(i) AS at, CAST(i AS BIGINT) AS value "
            f"FROM VALUES {rows} AS t(n, i)"
        )

    def refused(model: EngineModel, instants: list[int]) -> None:
        with pytest.raises(SnapshotRejectedError) as raised:
            model.refresh(snapshot(instants))
        message = str(raised.value)
        assert "partitioning by `at`" in message and "spark.sql.session.timeZone: UTC" in message
        assert "Main was not touched" in message, message

    with session_confs(spark, {TIME_ZONE: zone}):
        first = EngineModel(spark, "id INT", unique_key="id", partition_by="at")
        refused(first, [*kept[:3], lost[0]])
        assert not table_exists(spark, first.tables.main)

        model = EngineModel(spark, "id INT", unique_key="id", partition_by="at")
        model.refresh(snapshot(kept))
        for reader in (zone, "UTC", "Asia/Kathmandu"):
            with session_confs(spark, {TIME_ZONE: reader}):
                problems = content_problems(spark, model.tables.main, spark.sql(snapshot(kept)), 1)
            assert not problems, (zone, reader, problems[:3])
        version = model.version()
        refused(model, [*kept[: len(kept) // 2], *rng.sample(lost, min(3, len(lost)))])
        assert model.version() == version
        # values written as local times would read as other instants in another time zone
        with (
            session_confs(spark, {UTC_PARTITION_VALUES: "false"}),
            pytest.raises(ConfigError, match=f"sets {UTC_PARTITION_VALUES} to false"),
        ):
            model.refresh(snapshot(kept[1:]))
        assert model.version() == version and model.state().phase == "IDLE"


def test_a_layout_on_columns_of_any_name_is_kept_or_refused_by_name(spark, monkeypatch):
    """Liquid clustering on columns of drawn names, emoji among the columns before them: Delta
    rewrote the CREATE's CLUSTER BY at offsets each emoji shifted (a syntax error), and
    DESCRIBE DETAIL quotes such names, which read as another layout. Partitioning by a
    column whose name has a '.' or '`' is refused by name (Delta's MERGE failed on it);
    by other drawn names it works. Names drawn by REFRESHABLE_TEST_SEED."""
    from dbt.adapters.spark_refreshable.engine.sql import ident, unquoted

    rng = random.Random(int(os.environ.get("REFRESHABLE_TEST_SEED", "20261204")))
    said = record_messages(monkeypatch)
    names = list(dict.fromkeys(drawn_name(rng) for _ in range(12)))[:4]
    ddl = ", ".join(["`🔑 id` INT", *(f"{ident(n)} STRING" for n in names)])

    def day(n: int) -> list[tuple]:
        return [(i, *(f"{name[:2]}{(i + n) % 3}" for name in names)) for i in range(n, n + 20)]

    clustered = EngineModel(spark, ddl, unique_key="🔑 id", liquid_clustered_by=names[-2:])
    for n in (0, 5):
        clustered.refresh(day(n))
        assert [unquoted(c) for c in detail(clustered)["clusteringColumns"]] == names[-2:]
        assert clustered.main() == sorted(day(n)), names
    assert not [m for m in said if "main keeps its layout" in m], said

    plain = [n for n in names if "." not in n and "`" not in n] or ["a 😀"]
    odd = next((n for n in names if "." in n or "`" in n), "a.`b")
    for name in (plain[0], odd):
        model = EngineModel(spark, f"id INT, {ident(name)} STRING", unique_key="id")
        rows = [(i, f"p{i % 3}") for i in range(9)]
        if name == odd:
            with pytest.raises(ConfigError, match="Delta's MERGE cannot write") as refused:
                model.refresh(rows, partition_by=ident(name))
            assert repr(name) in str(refused.value)
            assert not table_exists(spark, model.tables.main)
            continue
        model.refresh(rows, partition_by=ident(name))
        model.refresh(rows[3:] + [(1, "p2")], partition_by=ident(name))
        assert list(detail(model)["partitionColumns"]) == [name]
        assert model.main() == sorted(rows[3:] + [(1, "p2")])


@pytest.mark.parametrize(
    ("config", "how"),
    [({"partition_by": "region"}, "partitioned"), ({"liquid_clustered_by": "REGION"}, "clustered")],
)
def test_a_snapshot_without_a_column_of_mains_layout_is_refused_before_anything_is_written(
    spark, config, how
):
    """sync_all_columns would drop the column, which Delta refuses: the merge failed after
    the load, every run, with the cycle left FINISHING."""
    model = EngineModel(spark, DDL, unique_key="id", on_schema_change="sync_all_columns", **config)
    model.refresh(DAY1)
    version = model.version()
    model.ddl = "id INT, value STRING"
    with pytest.raises(SchemaChangeError, match=rf"\['region'\], which main is {how} by"):
        model.refresh([(i, v) for i, _, v in DAY2])
    assert model.version() == version and model.state().phase == "IDLE"
    model.ddl = DDL
    model.refresh(DAY2)
    assert model.main() == sorted(DAY2)


def clustering(model: EngineModel) -> list[str]:
    return list(detail(model)["clusteringColumns"])


def test_clustering_follows_the_config_on_the_next_run(spark, monkeypatch):
    """liquid_clustered_by reaches an existing main by ALTER TABLE ... CLUSTER BY, a commit
    of metadata only (as dbt-databricks applies it): a main built without it, empty or not,
    is clustered by the next run, and a changed clustering is applied. The ALTER is the
    cycle's own commit: the next cycle still diffs through main's index. An unset config
    leaves main's clustering as it is."""
    said = record_messages(monkeypatch)
    model = EngineModel(spark, DDL, unique_key="id")
    model.refresh([], allow_empty_snapshot=True)  # as a crash between CREATE and clustering
    model.refresh(DAY1, liquid_clustered_by=["region", "id"])
    assert clustering(model) == ["region", "id"]
    model.refresh(DAY2)
    assert clustering(model) == ["region", "id"], "kept while the config names none"
    version = model.version()
    model.refresh(DAY2, liquid_clustered_by="ID")  # the same rows, clustered by another
    assert clustering(model) == ["id"]
    assert [h["operation"] for h in model.history(version)] == ["CLUSTER BY"]
    assert model.refresh(DAY3).diff_read_main is False, "the index trusted after the ALTER"
    crash_then_resume(model, DAY1)
    assert clustering(model) == ["id"] and model.main() == sorted(DAY1)
    assert not [m for m in said if "main keeps its layout" in m], said


def test_a_full_refresh_stopped_before_clustering_main_is_clustered_by_the_next_run(
    spark, monkeypatch
):
    """A --full-refresh replaces main, then clusters it in a commit of its own (Delta
    misparses a CREATE's CLUSTER BY after an emoji): a run stopped between the two leaves
    main holding the snapshot, unclustered, and the next run clusters it."""
    model = EngineModel(spark, DDL, unique_key="id", liquid_clustered_by="region")
    model.refresh(DAY1)

    def stopped(*_: Any) -> None:
        raise InjectedFault("stopped before clustering")

    with monkeypatch.context() as patched:
        patched.setattr(tables, "_cluster", stopped)
        with pytest.raises(InjectedFault):
            model.refresh(DAY2, full_refresh=True, liquid_clustered_by="id")
    assert clustering(model) == [] and model.main() == sorted(DAY2)
    model.refresh(DAY3, liquid_clustered_by="id")
    assert clustering(model) == ["id"] and model.main() == sorted(DAY3)


def test_a_changed_layout_is_reported_and_main_kept_until_a_full_refresh(spark, monkeypatch):
    said = record_messages(monkeypatch)
    model = EngineModel(spark, DDL, unique_key="id")
    model.refresh(DAY1)
    model.config["partition_by"] = "region"
    model.refresh(DAY2)
    assert list(detail(model)["partitionColumns"]) == []
    assert any(
        "partition_by is ['region'], main has none" in m and "--full-refresh" in m for m in said
    ), said
    assert model.main() == sorted(DAY2)
    model.refresh(DAY3, full_refresh=True)
    assert list(detail(model)["partitionColumns"]) == ["region"]
    assert model.main() == sorted(DAY3)
    # Delta clusters no partitioned table: a clustering waits for a --full-refresh too
    del model.config["partition_by"]
    model.refresh(DAY1, liquid_clustered_by="id")
    assert list(detail(model)["partitionColumns"]) == ["region"] and clustering(model) == []
    assert any("liquid_clustered_by is ['id'], main has none" in m for m in said), said
    assert model.main() == sorted(DAY1)


def test_two_models_of_one_alias_under_one_location_root_are_refused(spark, tmp_path):
    """location_root places main at <location_root>/<alias>: models of one alias in two
    schemas (staging.orders, marts.orders) get one folder. The second is refused, --full-refresh
    too, where it replaced the rows the first serves; so is one whose catalog entry a user
    pointed at that folder."""
    root = str(tmp_path / "lake")
    first = EngineModel(spark, DDL, unique_key="id", location_root=root)
    first.refresh(DAY1)
    second = EngineModel(spark, DDL, unique_key="id", location_root=root)
    second.tables = ModelTables(f"{first.tables.schema}_marts", first.tables.identifier)
    spark.sql(f"CREATE SCHEMA IF NOT EXISTS {second.tables.schema}")
    version = first.version()
    for full_refresh in (False, True):
        with pytest.raises(ConfigError, match="holds the main table of the model") as refused:
            second.refresh(DAY2, full_refresh=full_refresh)
        assert f"the model {first.tables.display.lower()}," in str(refused.value)
        assert not table_exists(spark, second.tables.main)
    spark.sql(
        f"CREATE TABLE {second.tables.main} USING delta LOCATION '{root}/{first.tables.identifier}'"
    )
    with pytest.raises(ConfigError, match="ALTER TABLE"):
        second.refresh(DAY2)
    assert first.version() == version and first.main() == sorted(DAY1)
    assert not first.refresh(DAY3).diff_read_main  # nothing but its own commits since
    assert first.main() == sorted(DAY3)


def test_location_root_places_main_through_refreshes_a_resume_and_full_refreshes(
    spark, monkeypatch, tmp_path
):
    """Main is an external table at <location_root>/<identifier>. Its files outlive DROP
    TABLE, so main created again there (after --full-refresh, or a user's DROP TABLE) must
    hold the snapshot alone, none of the rows left in those files."""
    said = record_messages(monkeypatch)
    root = tmp_path / "lake"
    model = EngineModel(spark, DDL, unique_key="id", location_root=f"{root}/")
    where = f"file:{root}/{model.tables.identifier}"

    def dropped_then(rows: list[tuple]) -> None:
        spark.sql(f"DROP TABLE {model.tables.main}")
        model.refresh(rows)

    for refresh in (
        lambda: model.refresh(DAY1),
        lambda: model.refresh(DAY2),
        lambda: crash_then_resume(model, DAY3),
        lambda: model.refresh(DAY1, full_refresh=True),
        lambda: dropped_then(DAY2),
    ):
        refresh()
        assert detail(model)["location"] == where
    assert model.main() == sorted(DAY2)
    kinds = spark.sql(f"DESCRIBE TABLE EXTENDED {model.tables.main}").collect()
    assert ("Type", "EXTERNAL") in {(r[0], r[1]) for r in kinds}

    model.config["location_root"] = str(tmp_path / "elsewhere")
    model.refresh(DAY3)
    assert detail(model)["location"] == where and model.main() == sorted(DAY3)
    assert any("location_root puts main at" in m and "--full-refresh" in m for m in said), said
