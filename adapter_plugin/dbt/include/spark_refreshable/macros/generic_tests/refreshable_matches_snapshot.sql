{#-- Proves a refreshable model's table equals its last completed snapshot, by content: the
     state is IDLE, and main and the snapshot (kept in staging at the version the state
     records) hold the same rows, compared with EXCEPT ALL both ways. Returns one row (the
     test fails) otherwise, saying what differs. --#}
{% test refreshable_matches_snapshot(model) %}
  {%- set bookkeeping_schema = spark_refreshable__bookkeeping_schema(model) -%}
  {%- set tables = adapter.refreshable_tables(model, bookkeeping_schema) -%}
  {%- set state_relation = api.Relation.create(schema=tables.bookkeeping_schema, identifier=tables.state) -%}
  {#-- the state table is a log: its row with the highest lease version is the state --#}
  {%- set newest_state = "select * from " ~ state_relation ~ " order by lease_version desc limit 1" -%}
  {%- set content_sql = "" -%}
  {%- if execute -%}
    {%- set found = run_query("select last_columns from (" ~ newest_state ~ ")") -%}
    {%- if found.rows | length == 1 -%}
      {%- set content_sql = adapter.refreshable_content_difference_sql(model, found.rows[0][0], bookkeeping_schema) -%}
    {%- endif -%}
  {%- endif -%}
  with state as (
    select phase, last_rows from ({{ newest_state }})
  ),
  counted as (
    select count(*) as actual_rows from {{ model }}
  ),
  content as (
    {%- if content_sql %}
    {{ content_sql }}
    {%- else %}
    select cast(null as bigint) as rows_missing, cast(null as bigint) as rows_extra
    {%- endif %}
  )
  select state.phase, state.last_rows as expected_rows, counted.actual_rows,
         content.rows_missing as snapshot_rows_missing_from_main,
         content.rows_extra as main_rows_not_in_snapshot,
         case when content.rows_missing is null
              then 'no completed snapshot recorded to compare with: run the model once more'
         end as note
  from state cross join counted cross join content
  where state.phase <> 'IDLE'
     or state.last_rows is null
     or state.last_rows <> counted.actual_rows
     or content.rows_missing is null
     or content.rows_missing > 0
     or content.rows_extra > 0
{% endtest %}
