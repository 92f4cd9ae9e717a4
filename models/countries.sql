{{ config(materialized='table') }}
-- A plain table model: customers per country.
select country, count(*) as customers, sum(lifetime_value) as lifetime_value
from {{ ref('customers') }}
group by country
