"""Whether a model's inputs changed since its last completed cycle (``skip_unchanged_inputs``).

A SQL model's analyzed plan names every table it reads, through views and subqueries. When
each one is a Delta table of the catalog and the plan neither draws random values nor reads
the clock or the session, a run can fingerprint what it reads: the compiled SQL, the config,
the session settings that change results, the plan in canonical form (so a view redefined
over the same tables shows), what the plan does not show (the bodies of the SQL functions
it calls, and the settings its views and SQL functions were defined under, which Spark
analyses them under), each input's Delta table id and version, and the version a query that
travels in time reads (which may follow the clock). The session settings are the effective
time zone and ANSI mode and every other spark.sql conf the session sets but those that only
tune execution (``HOW_NOT_WHAT``). A completed cycle stores that fingerprint with main's
table id, version and schema as the cycle verified them (:class:`Recorded`). The next run
skips when the fingerprint is the same and main's history since holds only commits that
change no row (comments, properties, constraints, compaction). Anything the engine cannot
see through (a Python model, a Python, Scala or Hive function, files read by path, another
format, a Spark Connect session) always refreshes.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from py4j.protocol import Py4JError

from dbt.adapters.spark_refreshable.engine.commits import (
    ROWLESS_OPERATIONS,
    latest_snapshot,
    recent_commits,
    snapshot_identity,
    table_id,
    table_identity,
    table_version,
)
from dbt.adapters.spark_refreshable.engine.tables import (
    table_exists,
)

# Leaves whose rows are in the compiled SQL itself (inline rows only when not inside a
# view: a view's plan shows no inline row), or in a CTE defined elsewhere in the plan
LITERAL_LEAVES = frozenset({"OneRowRelation", "LocalRelation", "Range", "CTERelationRef"})
# Functions deterministic to Catalyst whose result depends on the clock or the session
# (version(): Spark's release, which an upgrade changes)
CLOCK_OR_SESSION = re.compile(
    r"(?<![\w`])(current_\w+|now|curdate|localtimestamp|user|session_user|unix_timestamp"
    r"|version)\(",
    re.IGNORECASE,
)
# Text Spark casts to the clock's day or moment, known before the run (its optimizer's
# special values; 'epoch' is one too, and does not move); what Java's String.trim removes
CLOCK_WORDS = frozenset({"now", "today", "yesterday", "tomorrow"})
JAVA_TRIMMED = "".join(chr(code) for code in range(0x21))
CAST = "org.apache.spark.sql.catalyst.expressions.Cast"
DATETIME_TYPES = frozenset({"date", "timestamp", "timestamp_ntz"})
# Confs that change what the same plan returns also when a session leaves them unset: their
# defaults come from the JVM (the time zone) or the release
RESULT_CONFS = ("spark.sql.session.timeZone", "spark.sql.ansi.enabled")
# Confs that change how a plan runs, not what it returns, or name the session's catalog and
# warehouse; every other spark.sql conf a session sets may change results (a legacy
# behaviour, to_json's NULL fields, how binary prints) and is part of the fingerprint
HOW_NOT_WHAT = (
    "spark.sql.adaptive.",
    "spark.sql.artifact.",
    "spark.sql.autoBroadcastJoinThreshold",
    "spark.sql.broadcastTimeout",
    "spark.sql.catalog.",
    "spark.sql.catalogImplementation",
    "spark.sql.cbo.",
    "spark.sql.codegen.",
    "spark.sql.execution.",
    "spark.sql.extensions",
    "spark.sql.files.maxPartitionBytes",
    "spark.sql.files.openCostInBytes",
    "spark.sql.inMemoryColumnarStorage.",
    "spark.sql.join.",
    "spark.sql.optimizer.",
    "spark.sql.shuffle.",
    "spark.sql.statistics.",
    "spark.sql.ui.",
    "spark.sql.warehouse.dir",
)
MAX_INT = 2**31 - 1
# A call of a SQL function (its body is the expression's child) and the trait of functions
# whose code is outside the plan (Python, Scala, Hive)
SQL_FUNCTION_CALL = "org.apache.spark.sql.catalyst.analysis.SQLScalarFunction"
# A call of a SQL table function: a plan node whose child is the body's plan
TABLE_FUNCTION = "org.apache.spark.sql.catalyst.analysis.SQLFunctionNode"
USER_DEFINED_EXPRESSION = "org.apache.spark.sql.catalyst.expressions.UserDefinedExpression"
EXPRESSION_ID = re.compile(r"#\d+")
# A CTE's id in a plan comes from a counter of the session: numbered here by appearance
CTE_ID = re.compile(r"\b(CTERelation(?:Def|Ref)) (\d+)\b")


@dataclass(frozen=True)
class Inputs:
    """What a run reads: its fingerprint and each input's (Delta table id, version)."""

    fingerprint: str
    tables: dict[str, tuple[str, int]]

    def to_json(self) -> dict[str, Any]:
        return {"fingerprint": self.fingerprint, "tables": self.tables}

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Inputs:
        tables = {name: (str(i), int(v)) for name, (i, v) in value["tables"].items()}
        return cls(value["fingerprint"], tables)


@dataclass(frozen=True)
class VerifiedMain:
    """Main as a completed cycle left it, equal to its snapshot: table id, columns
    (:func:`main_schema`) and Delta version."""

    table_id: str
    schema: str
    version: int

    def to_json(self) -> list[Any]:
        return [self.table_id, self.schema, self.version]

    @classmethod
    def from_json(cls, value: list[Any]) -> VerifiedMain:
        table, schema, version = value
        return cls(str(table), schema, int(version))

    def why_changed(
        self, spark: Any, main: str, table: str | None = None, latest: int | None = None
    ) -> str | None:
        """Why ``main`` may not hold the same rows any more, or None: it is the same table
        with the same columns, and every commit since changed no row. ``table`` and
        ``latest``: main's id and version if already read (else one read of main's log
        gives both)."""
        if table is None:
            snapshot = latest_snapshot(spark, main)
            if snapshot is not None:
                table, newest = snapshot_identity(snapshot)
                latest = newest if latest is None else latest
            elif table_exists(spark, main):
                table = table_id(spark, main)
        if table != self.table_id:
            return f"{main} was dropped or replaced"
        if main_schema(spark, main) != self.schema:
            return f"{main}'s columns changed"
        latest = table_version(spark, main) if latest is None else latest
        if latest > self.version:
            commits = recent_commits(spark, main, latest - self.version)
            if any(c["version"] > latest for c in commits):  # the newest are not the ones due
                return f"{main} was written while this run checked it"
            commits = [c for c in commits if c["version"] > self.version]
            if len(commits) < latest - self.version:  # Delta's log cleanup deleted some
                return f"{main}'s history since the last cycle is no longer complete"
            written = [c for c in commits if c["operation"] not in ROWLESS_OPERATIONS]
            if written:
                version, operation = written[-1]["version"], written[-1]["operation"]
                return f"{main} was written since the last cycle (version {version}: {operation})"
        elif latest < self.version:
            return f"{main}'s history is older than the last cycle's"
        return None


@dataclass(frozen=True)
class Recorded:
    """A completed cycle's inputs, and main as the cycle verified it equal to the snapshot."""

    inputs: Inputs
    main: VerifiedMain

    def to_json(self) -> str:
        return json.dumps({**self.inputs.to_json(), "main": self.main.to_json()})

    @classmethod
    def parse(cls, stored: str | None) -> Recorded | None:
        if not stored:
            return None
        value = json.loads(stored)
        return cls(Inputs.from_json(value), VerifiedMain.from_json(value["main"]))


def read_inputs(spark: Any, frame: Any, sql: str, config: dict[str, Any]) -> Inputs | str:
    """The inputs of a SQL model's ``frame`` (``spark.sql(sql)``), or why they cannot be
    known."""
    jdf = getattr(frame, "_jdf", None)
    if jdf is None:
        return "this session does not show the model's plan (Spark Connect)"
    plan = jdf.queryExecution().analyzed()
    if not plan.deterministic():
        return "the model's SQL draws non-deterministic values"
    text = plan.treeString(True, False, MAX_INT, False, False)
    if CLOCK_OR_SESSION.search(text):
        return "the model's SQL reads the clock or the session"
    canonical_plan = plan.canonicalized()
    try:
        canonical_nodes = _json_nodes(json.loads(canonical_plan.toJSON()))
    except Exception as error:  # a plan Spark cannot describe: nothing to vouch for
        return f"the model's plan cannot be read ({type(error).__name__})"
    nodes = _plan_nodes(plan)
    calls = _sql_function_calls(spark, canonical_nodes, nodes)
    if isinstance(calls, str):
        return calls
    functions = [_body(call) for call in calls]
    if CLOCK_OR_SESSION.search(" ".join(functions)):
        return "a SQL function the model calls reads the clock or the session"
    clock = _clock_in_text(canonical_plan, canonical_nodes)
    if clock is not None:
        return clock
    read = _tables_read(spark, nodes)
    if isinstance(read, str):
        return read
    tables, travelled = read
    canonical = _numbered_ctes(canonical_plan.treeString(True, False, MAX_INT, False, False))
    described = [
        sql,
        config,
        result_settings(spark),
        canonical,
        functions,
        _definition_settings(spark, nodes, calls),
        plan.schema().json(),
        sorted(travelled),
    ]
    fingerprint = hashlib.sha256(
        json.dumps(described, sort_keys=True, default=str).encode()
    ).hexdigest()
    return Inputs(fingerprint, tables)


def _tables_read(
    spark: Any, nodes: list[PlanNode]
) -> tuple[dict[str, tuple[str, int]], list[tuple[str, int]]] | str:
    """The Delta tables of the catalog that the plan's leaves (``nodes``) read, each with
    its identity, and the versions those that travel in time read; or why the leaves
    cannot be vouched for."""
    tables: dict[str, tuple[str, int]] = {}
    travelled: list[tuple[str, int]] = []
    for leaf, in_view in ((n.node, n.in_view) for n in nodes if n.is_leaf):
        kind = leaf.getClass().getSimpleName()
        if kind == "LocalRelation" and in_view:
            return "the model reads a view of inline rows, which its plan does not show"
        if kind in LITERAL_LEAVES:
            continue
        catalog_table = leaf.catalogTable() if kind == "LogicalRelation" else None
        if catalog_table is None or not catalog_table.isDefined():
            return f"the model reads something other than a table of the catalog ({kind})"
        table = catalog_table.get()
        name = table.identifier().quotedString()
        provider = table.provider()
        if not provider.isDefined() or provider.get().lower() != "delta":
            return f"the model reads {name}, which is not a Delta table"
        tables[name] = table_identity(spark, name)
        version = _version_travelled_to(leaf, name)
        if isinstance(version, str):
            return version
        if version is not None:
            travelled.append((name, version))
    return tables, travelled


def _version_travelled_to(leaf: Any, name: str) -> int | str | None:
    """The version a Delta relation of a plan reads when the query travels in time
    (``VERSION AS OF``, or ``TIMESTAMP AS OF`` a moment that may be the clock's,
    ``current_date() - INTERVAL 1 DAY``): the plan shows neither the clause nor the version.
    None: it reads the table's latest version. A text: why it cannot be told."""
    try:
        index = leaf.relation().location()
        pinned = index.versionToUse()
    except Py4JError:  # not Delta's file index of a catalog table
        return f"the model's plan does not show which version of {name} it reads"
    return int(index.version()) if pinned.isDefined() else None


def result_settings(spark: Any) -> dict[str, str]:
    """The session's settings that may change what a plan returns: the effective values of
    ``RESULT_CONFS`` (a session that leaves the time zone unset takes the JVM's) and every
    other spark.sql conf it sets, but those of ``HOW_NOT_WHAT``."""
    settings = {key: value for key, value in spark.conf.getAll.items() if changes_results(key)}
    settings.update({conf: spark.conf.get(conf) for conf in RESULT_CONFS})
    return settings


def changes_results(conf: str) -> bool:
    """Whether a set conf may change what a plan returns: a spark.sql conf but those of
    ``HOW_NOT_WHAT``."""
    return conf.startswith("spark.sql.") and not conf.startswith(HOW_NOT_WHAT)


def _sql_function_calls(
    spark: Any, described: list[dict[str, Any]], nodes: list[PlanNode]
) -> list[Any] | str:
    """The calls of SQL functions in a plan (whose canonical form's JSON nodes are
    ``described``, whose nodes are ``nodes``), whose bodies its tree does not show (only
    ``f(x)``): a function replaced by one of another body must change the fingerprint. Or
    why the plan cannot be vouched for: it calls a function whose code Spark does not see (a
    Python, Scala or Hive function)."""
    jvm = spark._jvm
    user_defined = jvm.java.lang.Class.forName(USER_DEFINED_EXPRESSION)
    opaque_classes = {
        name
        for name in {node["class"] for node in described}
        if _is_user_defined(jvm, user_defined, name)
    }
    opaque = sorted(
        {
            str(node.get("name") or node.get("udfName") or node["class"].rsplit(".", 1)[-1])
            for node in described
            if node["class"] in opaque_classes
        }
    )
    if opaque:
        return f"the model calls user-defined function(s) {opaque}, whose code Spark cannot show"
    if not any(node["class"] == SQL_FUNCTION_CALL for node in described):
        return []
    return [e for e in _expressions(nodes) if e.getClass().getName() == SQL_FUNCTION_CALL]


def _clock_in_text(canonical_plan: Any, described: list[dict[str, Any]]) -> str | None:
    """Why a plan (in canonical form, whose JSON nodes are ``described``) reads the clock
    through text cast to a date or timestamp, or None. Spark
    reads text known before the run ('today', ' Tomorrow UTC', 'yester' || 'day') as the
    clock's day or moment (its optimizer's special values): ``CAST('today' AS DATE)``, also
    cast implicitly (``d > 'today'``) or by ``to_date('now')``, reads the clock as
    ``current_date()`` does, though Spark calls it deterministic and the plan shows the
    text. Searched in the canonical plan, where ``to_date`` is the cast it stands for."""
    if not any(n["class"] == CAST and n.get("dataType") in DATETIME_TYPES for n in described):
        return None
    for expression in _expressions(_plan_nodes(canonical_plan)):
        if expression.getClass().getName() != CAST:
            continue
        text = expression.child()
        if (
            expression.dataType().typeName() in DATETIME_TYPES
            and text.foldable()
            and text.dataType().typeName() == "string"
            and _reads_the_clock(text.eval(None))
        ):
            return (
                f"the model's SQL reads the clock: {expression.sql()} is the day or moment of "
                f"the run (write the date, or current_date())"
            )
    return None


def _reads_the_clock(text: Any) -> bool:
    """Whether Spark reads the text (a ``UTF8String``, or None) as a moment of the clock:
    after Java's trim, a word of ``CLOCK_WORDS`` in any case, alone or before a space."""
    if text is None:
        return False
    word = str(text.toString()).strip(JAVA_TRIMMED).split(" ", 1)[0]
    return word.lower() in CLOCK_WORDS


def _body(call: Any) -> str:
    """The body of a SQL function's ``call``, the same in every session."""
    return EXPRESSION_ID.sub("", call.child().canonicalized().toString())


def _definition_settings(spark: Any, nodes: list[PlanNode], calls: list[Any]) -> list[Any]:
    """The settings the plan's views and SQL functions are analysed under, which its tree
    does not show (``CAST(ts AS STRING)`` in a view spells ts in the view's time zone): those
    each captured when it was defined, not the session's (:func:`changes_results`), and for
    the ``RESULT_CONFS`` it did not capture, what a new session takes (the JVM's time zone)."""
    defaults = spark._jvm.org.apache.spark.sql.internal.SQLConf()
    defined = [
        (n.node.desc().identifier().quotedString(), n.node.desc().viewSQLConfigs())
        for n in nodes
        if n.node.getClass().getSimpleName() == "View"
    ]
    functions = [n.node.function() for n in nodes if n.node.getClass().getName() == TABLE_FUNCTION]
    functions += [call.function() for call in calls]
    defined += [(f.name().toString(), f.getSQLConfigs()) for f in functions]
    described = []
    for name, captured in defined:
        pairs = ((setting._1(), setting._2()) for setting in _items(captured))
        settings = {key: value for key, value in pairs if changes_results(key)}
        for conf in RESULT_CONFS:  # Spark captures them; a view of Spark 2 captured none
            settings.setdefault(conf, defaults.getConfString(conf))
        described.append([name, settings])
    return sorted(described, key=json.dumps)


def _is_user_defined(jvm: Any, user_defined: Any, name: str) -> bool:
    try:
        return bool(user_defined.isAssignableFrom(jvm.java.lang.Class.forName(name)))
    except Exception:  # a class of another class loader (Delta's): none of them is a UDF
        return False


def _json_nodes(value: Any) -> list[dict[str, Any]]:
    """Every node (a dict with a "class") in a tree's JSON (``TreeNode.toJSON``)."""
    found, pending = [], [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            if "class" in item:
                found.append(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return found


def _expressions(nodes: list[PlanNode]) -> list[Any]:
    """Every expression of a plan's ``nodes``, at any depth."""
    found = []
    pending = [e for n in nodes for e in _items(n.node.expressions())]
    while pending:
        expression = pending.pop()
        found.append(expression)
        pending.extend(_items(expression.children()))
    return found


@dataclass(frozen=True)
class PlanNode:
    """A node of a logical plan (a py4j object), whether it is inside a view and whether
    it is a leaf (no children; its subqueries are walked apart)."""

    node: Any
    in_view: bool
    is_leaf: bool


def _plan_nodes(plan: Any) -> list[PlanNode]:
    """Every node of a plan and of every subquery in it."""
    found, pending = [], [(plan, False)]
    while pending:
        node, in_view = pending.pop()
        in_view = in_view or node.getClass().getSimpleName() == "View"
        children = _items(node.children())
        found.append(PlanNode(node, in_view, not children))
        pending.extend((child, in_view) for child in children + _items(node.subqueries()))
    return found


def _numbered_ctes(text: str) -> str:
    """``text`` with CTE ids numbered by first appearance, the same in every session."""
    numbers: dict[str, int] = {}
    return CTE_ID.sub(lambda m: f"{m[1]} {numbers.setdefault(m[2], len(numbers))}", text)


def _items(sequence: Any) -> list[Any]:
    iterator, items = sequence.iterator(), []
    while iterator.hasNext():
        items.append(iterator.next())
    return items


def reason_to_refresh(spark: Any, main: str, recorded: Recorded | None, now: Inputs) -> str | None:
    """Why the model must refresh although its inputs are known; None: skip it."""
    if recorded is None:
        return "the last completed cycle recorded no inputs"
    if recorded.inputs.fingerprint != now.fingerprint:
        return "the model's SQL, config or plan changed"
    for name, (table, version) in now.tables.items():
        if recorded.inputs.tables.get(name) != (table, version):
            before = recorded.inputs.tables.get(name)
            was = f"version {before[1]}" if before else "not read"
            return f"{name} changed ({was}, now version {version})"
    return recorded.main.why_changed(spark, main)


def main_schema(spark: Any, main: str) -> str:
    """Main's column names and types (not their comments), as compared between runs."""
    return json.dumps([[f.name, f.dataType.jsonValue()] for f in spark.table(main).schema])
