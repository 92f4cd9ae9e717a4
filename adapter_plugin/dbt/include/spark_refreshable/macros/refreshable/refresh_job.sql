{#-- The Python job that runs one refresh. For a Python model, the model's compiled code
     comes first (it defines `model` and `dbtObj`); for a SQL model, the compiled SQL is
     the snapshot. The engine evaluates the snapshot only when a new cycle loads. --#}
{% macro spark_refreshable__refresh_job(relation, refresh_config, language, compiled_code) %}
{%- set request = {
    'model': model.unique_id,
    'schema': relation.schema,
    'identifier': relation.identifier,
    'config': refresh_config,
    'full_refresh': should_full_refresh(),
    'invocation_id': invocation_id,
} -%}
{%- if language == 'python' %}
{{ compiled_code }}
{%- endif %}
# --- dbt-refreshable: the refresh job --- #
import json as __refreshable_json
from dbt.adapters.spark_refreshable.engine.refresh import run_refresh as __refreshable_run

def __refreshable_snapshot():
{%- if language == 'python' %}
    return model(dbtObj(spark.table), spark)
{%- else %}
    return spark.sql(__refreshable_json.loads({{ compiled_code | tojson | tojson }}))
{%- endif %}

dbt_job_result = __refreshable_run(
    spark,
    __refreshable_json.loads({{ request | tojson | tojson }}),
    __refreshable_snapshot,
    dbt_job,
)
{% endmacro %}
