{#-- What every system reads: the Delta table named by var `source` when it is set (the
     inputs_unchanged scenario), otherwise the Parquet snapshot of var `snapshot`. With var
     `revision` k > 0 (the file-count run), l_comment is revised in the lines of hash buckets
     0 to k-1 of 100: each revision revises 1% more of the lines and keeps the earlier ones. --#}
{% macro bench_input() %}
  {%- set input = var('source') if var('source') else "parquet.`" ~ var('snapshot') ~ "`" -%}
  {%- set revision = var('revision') | int -%}
  {%- if revision > 0 -%}
    (select l_orderkey, l_partkey, l_suppkey, l_linenumber, l_quantity, l_extendedprice,
            l_discount, l_tax, l_returnflag, l_linestatus, l_shipdate, l_commitdate,
            l_receiptdate, l_shipinstruct, l_shipmode,
            case when pmod(hash(l_orderkey, l_linenumber), 100) < {{ revision }}
                 then concat(l_comment, ' (revised)') else l_comment end as l_comment
     from {{ input }})
  {%- else -%}
    {{ input }}
  {%- endif -%}
{% endmacro %}
