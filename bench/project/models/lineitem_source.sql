{#-- The inputs_unchanged scenario's Delta input: the snapshot, copied once. --#}
{{ config(materialized='table', file_format='delta') }}
select * from parquet.`{{ var('snapshot') }}`
