"""Where dbt's Python jobs (Python models and the refreshable engine) run.

One small abstraction, one implementation per place, chosen from the connection's
credentials by :func:`for_credentials` (both under ``method: session``):

- a Spark driver inside the dbt process (``local[*]``, or executors on a cluster through
  ``spark.master``: ``spark://``, ``yarn``, ``k8s://``): :mod:`.session`;
- a Spark Connect server (``spark.remote: sc://host:port``): :mod:`.connect`.
"""

from __future__ import annotations

from dbt.adapters.spark.connections import SparkConnectionMethod
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_refreshable.environments.base import JobContext, SparkEnvironment
from dbt.adapters.spark_refreshable.environments.connect import (
    REMOTE_PARAMETER,
    ConnectSparkEnvironment,
)
from dbt.adapters.spark_refreshable.environments.session import InProcessSparkEnvironment

__all__ = ["JobContext", "SparkEnvironment", "for_credentials"]


def for_credentials(credentials: object) -> SparkEnvironment:
    """The environment that runs Python jobs for a connection, or a clear error."""
    method = getattr(credentials, "method", None)
    if method == SparkConnectionMethod.SESSION:
        if REMOTE_PARAMETER in (getattr(credentials, "server_side_parameters", None) or {}):
            return ConnectSparkEnvironment.shared(credentials)
        return InProcessSparkEnvironment.shared(credentials)
    raise DbtRuntimeError(
        f"Python models and refreshable models need a Spark session in the dbt process, "
        f"but this connection uses method: {method}. Use `method: session` in profiles.yml "
        f"(local[*], spark.master pointing at a cluster, or spark.remote at a Spark Connect "
        f"server)."
    )
