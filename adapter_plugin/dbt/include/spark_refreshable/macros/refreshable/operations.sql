{#-- Operations for people: `dbt run-operation refreshable_status` (`--args '{format: json}'`:
     one JSON object per model and line, for programs) and
     `dbt run-operation refreshable_unlock --args '{model: orders}'`. --#}

{% macro refreshable_status(format='text') %}
  {%- set nodes = spark_refreshable__refreshable_nodes() -%}
  {%- if nodes | length == 0 -%}
    {{ log("No refreshable models in this project.", info=True) }}
  {%- endif -%}
  {%- for node in nodes -%}
    {%- set relation = api.Relation.create(schema=node.schema, identifier=node.alias) -%}
    {{ log(adapter.refreshable_status(relation, format, node.config.get('bookkeeping_schema')), info=True) }}
  {%- endfor -%}
{% endmacro %}

{% macro refreshable_unlock(model, force=false) %}
  {%- set matches = spark_refreshable__refreshable_nodes() | selectattr('name', 'equalto', model) | list -%}
  {%- if matches | length == 0 -%}
    {{ exceptions.raise_compiler_error(
        "refreshable_unlock: no refreshable model named '" ~ model ~ "'. Refreshable models: "
        ~ (spark_refreshable__refreshable_nodes() | map(attribute='name') | join(', ') or 'none')) }}
  {%- endif -%}
  {%- set node = matches[0] -%}
  {%- set relation = api.Relation.create(schema=node.schema, identifier=node.alias) -%}
  {%- set lock_timeout = node.config.get('lock_timeout') -%}
  {{ log(adapter.refreshable_unlock(relation, lock_timeout, force, node.config.get('bookkeeping_schema')), info=True) }}
{% endmacro %}

{#-- The bookkeeping_schema config of the refreshable model whose table is `relation`
     (none: the default schema) --#}
{% macro spark_refreshable__bookkeeping_schema(relation) %}
  {%- for node in spark_refreshable__refreshable_nodes() -%}
    {%- if node.schema | lower == relation.schema | lower and node.alias | lower == relation.identifier | lower -%}
      {{ return(node.config.get('bookkeeping_schema')) }}
    {%- endif -%}
  {%- endfor -%}
  {{ return(none) }}
{% endmacro %}

{% macro spark_refreshable__refreshable_nodes() %}
  {%- set nodes = [] -%}
  {%- if execute -%}
    {%- for node in graph.nodes.values() if node.resource_type == 'model' and node.config.materialized == 'refreshable' -%}
      {%- do nodes.append(node) -%}
    {%- endfor -%}
  {%- endif -%}
  {{ return(nodes) }}
{% endmacro %}
