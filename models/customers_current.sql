{{ config(materialized='refreshable', unique_key='customer_id', vnodes=16, change_data_feed=true) }}
-- A refreshable SQL model: the full current snapshot of customers. The demo changes the
-- source between two runs with --vars 'demo_day: 2': some customers leave, some move
-- country, new ones sign up; the refresh writes only those rows.
{% set day = var('demo_day', 1) | int %}
select customer_id,
       name,
       case when {{ day }} >= 2 and customer_id % 5 = 0 then 'PT' else country end as country,
       signup_date,
       lifetime_value
from {{ ref('customers') }}
where not ({{ day }} >= 2 and customer_id % 7 = 0)
{% if day >= 2 %}
union all
select cast(1000 + id as int) as customer_id, concat('New customer ', id) as name, 'NL' as country,
       date'2026-11-22' as signup_date, cast(0 as decimal(12,2)) as lifetime_value
from range(1, 11) as new_customers(id)
{% endif %}
