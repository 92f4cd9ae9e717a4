{#-- What every system reads: the Delta table named by var `source` when it is set (the
     inputs_unchanged scenario), otherwise the Parquet snapshot of var `snapshot`. --#}
{% macro bench_input() %}
  {%- if var('source') -%}
    {{ var('source') }}
  {%- else -%}
    parquet.`{{ var('snapshot') }}`
  {%- endif -%}
{% endmacro %}
