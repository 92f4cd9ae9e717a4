"""Main's table and column comments from the model's docs (dbt's ``persist_docs``).

dbt-spark persists column comments only for models configured with a ``file_format`` of
delta, hudi or iceberg, and a table comment only when it creates the table; a refreshable
main is a Delta table that the engine creates and then merges into. So the comments are
set here, after every run: each only when it differs from main's, so that a run with
nothing new commits nothing (a comment is a row-less commit: the next cycle still diffs
without reading main, and a run with unchanged inputs still skips).
"""

from __future__ import annotations

from typing import Any

from dbt.adapters.spark_refreshable.engine.naming import fold_name
from dbt.adapters.spark_refreshable.engine.sql import ident, literal


def main_comments(spark: Any, table: str) -> tuple[str | None, dict[str, tuple[str, str | None]]]:
    """Main's table comment, and its top-level columns' names and comments by lower-case
    name (from ``DESCRIBE TABLE EXTENDED``: the columns come first, up to a blank or ``#``
    row; the table's comment is the ``Comment`` row of its detail section)."""
    columns: dict[str, tuple[str, str | None]] = {}
    table_comment = None
    section = "columns"
    for name, value, comment in (
        tuple(row) for row in spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect()
    ):
        if not name or name.startswith("#"):
            section = "detail" if name == "# Detailed Table Information" else "other"
        elif section == "columns":
            columns[fold_name(name)] = (name, comment or None)
        elif section == "detail" and name == "Comment":
            table_comment = value or None
    return table_comment, columns


def persist_comments(
    spark: Any,
    table: str,
    table_comment: str | None,
    column_comments: dict[str, str],
) -> None:
    """Set main's comment to ``table_comment`` (None or empty: leave it) and each column's
    in ``column_comments`` (name -> comment; names matched case-insensitively, columns main
    lacks and empty comments skipped), where they differ."""
    current_table, current_columns = main_comments(spark, table)
    if table_comment and table_comment != current_table:
        spark.sql(f"COMMENT ON TABLE {table} IS {literal(table_comment)}")
    for name, comment in column_comments.items():
        column, current = current_columns.get(fold_name(name), (None, None))
        if comment and column is not None and comment != current:
            spark.sql(
                f"ALTER TABLE {table} ALTER COLUMN {ident(column)} COMMENT {literal(comment)}"
            )
