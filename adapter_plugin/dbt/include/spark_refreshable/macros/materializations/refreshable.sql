{#--
  The `refreshable` materialization: keeps the model's table equal to its full snapshot,
  writing only what changed, resumably, under a persistent lock. It orchestrates; the
  engine in the adapter plugin (dbt.adapters.spark_refreshable.engine) does the work, as a
  Python job submitted through the same path as Python models.
--#}
{% materialization refreshable, adapter='spark_refreshable', supported_languages=['sql', 'python'] %}

  {#-- Validate early: no SQL runs if the config cannot work --#}
  {%- set refresh_config = spark_refreshable__validate_refreshable_config() -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set grant_config = config.get('grants') -%}
  {%- if grant_config -%}
    {%- do adapter.refreshable_check_grants(target_relation) -%}
  {%- endif -%}

  {{ run_hooks(pre_hooks) }}

  {#-- The refresh cycle: one Python job on the model's own session --#}
  {%- call statement('main', language='python') -%}
    {{ spark_refreshable__refresh_job(target_relation, refresh_config, model.language, compiled_code) }}
  {%- endcall -%}

  {% do refreshable_persist_docs(target_relation, model) %}

  {{ run_hooks(post_hooks) }}

  {%- set should_revoke = should_revoke(existing_relation, full_refresh_mode=should_full_refresh()) -%}
  {% do apply_grants(target_relation, grant_config, should_revoke) %}

  {{ return({'relations': [target_relation]}) }}

{% endmaterialization %}
