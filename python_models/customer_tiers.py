"""A refreshable Python model: customers per country and value tier, kept in sync."""

from pyspark.sql import functions as F


def model(dbt, session):
    dbt.config(materialized="refreshable", unique_key=["country", "tier"], vnodes=8)
    customers = dbt.ref("customers_current")
    tier = (
        F.when(F.col("lifetime_value") >= 3000, "gold")
        .when(F.col("lifetime_value") >= 1000, "silver")
        .otherwise("bronze")
    )
    return (
        customers.withColumn("tier", tier)
        .groupBy("country", "tier")
        .agg(F.count("*").alias("customers"), F.sum("lifetime_value").alias("lifetime_value"))
    )
