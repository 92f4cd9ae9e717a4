"""The `session` submission method: run a compiled Python job inside the dbt process.

dbt-spark can only submit Python to Databricks clusters. Here the compiled code (a Python
model, or the refreshable engine's job) runs with ``exec`` on a session of its own
(``newSession()``: its own SQL confs and temporary views, so ``threads: 4`` is safe),
under a Spark job tag so that cancelling dbt cancels its Spark jobs.
"""

from __future__ import annotations

import linecache
import traceback
from typing import Any

from dbt.adapters.base import PythonJobHelper
from dbt_common.exceptions import DbtRuntimeError

from dbt.adapters.spark_refreshable import environments
from dbt.adapters.spark_refreshable.engine.job import JOB_GLOBAL, RESULT_GLOBAL, SESSION_GLOBAL


class SessionPythonJobHelper(PythonJobHelper):
    def __init__(self, parsed_model: dict, credentials: Any) -> None:
        self.unique_id: str = parsed_model.get("unique_id") or parsed_model.get("alias", "model")
        self.environment = environments.for_credentials(credentials)

    def submit(self, compiled_code: str) -> Any:
        filename = f"<dbt python job {self.unique_id}>"
        # The materialization's template puts blank lines before the model's code: drop them,
        # so that traceback line numbers are those of the compiled model dbt points to.
        lines = compiled_code.splitlines(keepends=True)
        while lines and not lines[0].strip():
            lines.pop(0)
        compiled_code = "".join(lines)
        # Tracebacks then show the lines of the compiled code.
        linecache.cache[filename] = (len(compiled_code), None, lines, filename)
        session = self.environment.isolated_session()
        try:
            with self.environment.job(self.unique_id, session) as job:
                namespace: dict[str, Any] = {SESSION_GLOBAL: session, JOB_GLOBAL: job}
                exec(compile(compiled_code, filename, "exec"), namespace)
                return namespace.get(RESULT_GLOBAL)
        except DbtRuntimeError:
            raise
        except Exception as exc:
            raise DbtRuntimeError(
                f"Python job for {self.unique_id} failed: {type(exc).__name__}: {exc}\n\n"
                + "".join(traceback.format_exception(exc))
            ) from exc
        finally:
            linecache.cache.pop(filename, None)
