{{ config(materialized='refreshable', unique_key=['l_orderkey', 'l_linenumber'],
          merge_chunk_rows=var('merge_chunk_rows') | int) }}
select * from {{ bench_input() }}
