"""A plain Python model: countries ranked by lifetime value, built on the session."""

from pyspark.sql import Window
from pyspark.sql import functions as F


def model(dbt, session):
    dbt.config(materialized="table")
    countries = dbt.ref("countries")
    by_value = Window.orderBy(F.col("lifetime_value").desc())
    return countries.withColumn("value_rank", F.rank().over(by_value))
