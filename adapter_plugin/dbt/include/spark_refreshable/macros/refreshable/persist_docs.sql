{#-- persist_docs on main: its table comment from the model's description and its columns'
     comments from theirs, set by the engine where they differ from main's (so a run with
     nothing new commits nothing). dbt-spark's own persist_docs sets column comments only
     for a model whose file_format is delta, hudi or iceberg, which a refreshable model
     does not name: main is always Delta. --#}
{% macro refreshable_persist_docs(relation, model) %}
  {%- set table_comment = model.description if config.persist_relation_docs() else none -%}
  {%- set column_comments = {} -%}
  {%- if config.persist_column_docs() -%}
    {%- for column in model.columns.values() -%}
      {%- do column_comments.update({column.name: column.description}) -%}
    {%- endfor -%}
  {%- endif -%}
  {%- if table_comment or column_comments -%}
    {%- do adapter.refreshable_persist_docs(relation, table_comment, column_comments) -%}
  {%- endif -%}
{% endmacro %}
