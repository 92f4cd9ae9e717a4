{#-- Proves a refreshable model's table equals its last completed snapshot: the state is
     IDLE and the table's row count and content checksum equal the snapshot's. Returns one
     row (the test fails) otherwise, saying what differs. --#}
{% test refreshable_matches_snapshot(model) %}
  {%- set tables = adapter.refreshable_tables(model) -%}
  {%- set state_relation = api.Relation.create(schema=model.schema, identifier=tables.state) -%}
  {%- set columns = [] -%}
  {%- if execute -%}
    {%- set found = run_query("select last_columns from " ~ state_relation) -%}
    {%- if found.rows | length == 1 and found.rows[0][0] -%}
      {%- set columns = fromjson(found.rows[0][0]) -%}
    {%- endif -%}
  {%- endif -%}
  with state as (
    select phase, last_rows, last_checksum from {{ state_relation }}
  ),
  main as (
    select count(*) as actual_rows,
           {{ adapter.refreshable_checksum_sql(columns) if columns else "'none'" }} as actual_checksum
    from {{ model }}
  )
  select state.phase, state.last_rows as expected_rows, main.actual_rows,
         state.last_checksum as expected_checksum, main.actual_checksum
  from state cross join main
  where state.phase <> 'IDLE'
     or state.last_rows is null
     or state.last_rows <> main.actual_rows
     or state.last_checksum <> main.actual_checksum
{% endtest %}
