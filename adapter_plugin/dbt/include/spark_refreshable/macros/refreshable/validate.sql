{#-- Config checks live in one place, the engine's spec (RefreshConfig); this asks it
     before anything runs, so a bad config is an error that names the key and the
     accepted values. --#}
{% macro spark_refreshable__validate_refreshable_config() %}
  {{ return(adapter.refreshable_config(model.config)) }}
{% endmacro %}
