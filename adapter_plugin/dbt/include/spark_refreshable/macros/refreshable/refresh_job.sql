{#-- The Python job that runs one refresh. For a Python model, the model's compiled code
     comes first (it defines `model` and `dbtObj`); for a SQL model, the compiled SQL goes
     in the request: it is the snapshot, and what the engine checks for changed inputs.
     The engine evaluates the snapshot only when a new cycle loads. The request's fields,
     the result and the globals `spark`, `dbt_job`, `dbt_job_result` are the contract of
     engine/job.py. --#}
{% macro spark_refreshable__refresh_job(relation, refresh_config, language, compiled_code) %}
{%- set request = {
    'model': model.unique_id,
    'schema': relation.schema,
    'identifier': relation.identifier,
    'config': refresh_config,
    'full_refresh': should_full_refresh(),
    'empty': flags.EMPTY is true,
    'invocation_id': invocation_id,
} -%}
{%- if language != 'python' %}{% do request.update({'sql': compiled_code}) %}{% endif -%}
{%- if language == 'python' %}
{{ compiled_code }}
{%- endif %}
# --- dbt-refreshable: the refresh job --- #
import json as __refreshable_json
from dbt.adapters.spark_refreshable.engine.refresh import run_refresh as __refreshable_run

{%- if language == 'python' %}
def __refreshable_snapshot():
    return model(dbtObj(spark.table), spark)
{%- else %}
__refreshable_snapshot = None  # the engine runs the request's `sql`
{%- endif %}

dbt_job_result = __refreshable_run(
    spark,
    __refreshable_json.loads({{ request | tojson | tojson }}),
    __refreshable_snapshot,
    dbt_job,
)
{% endmacro %}
