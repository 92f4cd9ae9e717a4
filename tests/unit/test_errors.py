"""What the engine's error messages keep of an error the JVM raised."""

from __future__ import annotations

from dbt.adapters.spark_refreshable.engine.errors import RefreshError, first_line, message_of

# str() of a Py4JJavaError that PySpark left unconverted: Py4J's line, then the JVM's trace
DELTA = "org.apache.spark.sql.delta"
VIOLATION = (
    f": {DELTA}.schema.DeltaInvariantViolationException: [DELTA_VIOLATE_CONSTRAINT_WITH_VALUES] "
    "CHECK constraint pos (n > 0) violated by row with values:"
)
CAUSE = "Caused by: org.apache.spark.SparkException: [TASK_WRITE_FAILED] Task failed."
UNCONVERTED = "\n".join(
    [
        "An error occurred while calling o62.sql.",
        VIOLATION,
        " - n : -1",
        f"\tat {DELTA}.schema.DeltaInvariantViolationException$.apply(Invariant.scala:106)",
        "\tat java.base/java.lang.Thread.run(Thread.java:840)",
        CAUSE,
        f"\tat {DELTA}.files.DeltaFileFormatWriter$.executeTask(DeltaFileFormatWriter.scala:471)",
        "\t... 12 more",
    ]
)


def test_the_jvms_stack_frames_are_left_out_and_its_messages_kept():
    assert message_of(RuntimeError(UNCONVERTED)).splitlines() == [
        "An error occurred while calling o62.sql.",
        VIOLATION,
        " - n : -1",
        CAUSE,
    ]


def test_a_dbt_errors_message_comes_without_its_heading():
    error = RefreshError("The snapshot is empty.\n  at most 3 rows at a time (not a frame)")
    assert str(error).startswith("Runtime Error")
    assert message_of(error) == "The snapshot is empty.\n  at most 3 rows at a time (not a frame)"


def test_a_quoted_error_is_its_first_line_cut_at_the_limit_and_empty_without_a_message():
    assert first_line(RuntimeError(UNCONVERTED)) == "An error occurred while calling o62.sql."
    assert first_line(RuntimeError("\n  [TABLE_OR_VIEW_NOT_FOUND] x  \nmore")) == (
        "[TABLE_OR_VIEW_NOT_FOUND] x"
    )
    assert first_line(RuntimeError("x" * 900), 400) == "x" * 400
    assert first_line(RuntimeError()) == ""
    assert first_line(RefreshError("Runtime heading left out")) == "Runtime heading left out"
