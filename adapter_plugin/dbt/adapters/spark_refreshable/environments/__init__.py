"""Where dbt's Python jobs (Python models and the refreshable engine) run.

One small abstraction, one implementation per place, chosen from the connection's
credentials by :func:`for_credentials`. Today: ``session``, a Spark driver inside the dbt
process (``local[*]`` or a ``spark://`` standalone master, which is the same code).
"""

from __future__ import annotations

from dbt.adapters.spark.connections import SparkConnectionMethod
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_refreshable.environments.base import JobContext, SparkEnvironment
from dbt.adapters.spark_refreshable.environments.session import InProcessSparkEnvironment

__all__ = ["JobContext", "SparkEnvironment", "for_credentials"]


def for_credentials(credentials: object) -> SparkEnvironment:
    """The environment that runs Python jobs for a connection, or a clear error."""
    method = getattr(credentials, "method", None)
    if method == SparkConnectionMethod.SESSION:
        return InProcessSparkEnvironment.shared(credentials)
    raise DbtRuntimeError(
        f"Python models and refreshable models need a Spark session in the dbt process, "
        f"but this connection uses method: {method}. Use `method: session` in profiles.yml "
        f"(local[*], or spark.master pointing at a standalone cluster)."
    )
