{#-- Proves a refreshable model's table equals its last completed snapshot, by content: the
     state is IDLE, and main and the snapshot (kept in staging at the version the state
     records) hold the same rows, compared with EXCEPT ALL both ways. Returns one row (the
     test fails) otherwise, saying what differs. --#}
{% test refreshable_matches_snapshot(model) %}
  {%- set bookkeeping_schema = spark_refreshable__bookkeeping_schema(model) -%}
  {#-- the state as the engine reads it from its table's log: a scan of the table could
       find the row of a compare-and-set that lost --#}
  {%- set state = (adapter.refreshable_state(model, bookkeeping_schema) if execute else none) or {} -%}
  {%- set content_sql = "" -%}
  {%- if state.get('last_columns') -%}
    {%- set content_sql = adapter.refreshable_content_difference_sql(model, state['last_columns'], bookkeeping_schema) -%}
  {%- endif -%}
  with state as (
    select cast({{ "'" ~ state['phase'] ~ "'" if state.get('phase') else 'null' }} as string) as phase,
           cast({{ state['last_rows'] if state.get('last_rows') is not none else 'null' }} as bigint) as last_rows
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
