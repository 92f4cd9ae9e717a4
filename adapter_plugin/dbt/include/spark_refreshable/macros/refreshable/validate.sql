{#-- Config checks live in one place, the engine's spec (RefreshConfig); this asks it
     before anything runs, so a bad config is an error that names the key and the
     accepted values. --#}
{#-- An enforced contract: a SQL model's columns and types must be the contract's (dbt's
     own check), and its constraints go to the engine, which checks every snapshot against
     them before main is touched and keeps them on main as Delta CHECK constraints. --#}
{% macro spark_refreshable__validate_refreshable_config() %}
  {%- set contract_config = config.get('contract') -%}
  {%- set contract = none -%}
  {%- if contract_config and contract_config.enforced -%}
    {%- if model.language == 'sql' -%}
      {%- do get_assert_columns_equivalent(sql) -%}
    {%- endif -%}
    {%- set contract = {'columns': model.columns, 'constraints': model.constraints} -%}
  {%- endif -%}
  {{ return(adapter.refreshable_config(model.config, contract)) }}
{% endmacro %}
