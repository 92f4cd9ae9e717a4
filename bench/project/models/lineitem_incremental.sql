{{ config(materialized='incremental', incremental_strategy='merge', file_format='delta',
          unique_key=['l_orderkey', 'l_linenumber']) }}
select * from {{ bench_input() }}
