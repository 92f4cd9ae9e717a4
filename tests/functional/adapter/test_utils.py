"""dbt's cross-database macros and data type macros, as dbt-spark implements them. The plugin
overrides none of them: the data type tests (every result type through the plugin's
connection) are in `make test`'s gate, the macros in `make test-all`."""

import pytest
from dbt.tests.adapter.utils.data_types.test_type_bigint import BaseTypeBigInt
from dbt.tests.adapter.utils.data_types.test_type_boolean import BaseTypeBoolean
from dbt.tests.adapter.utils.data_types.test_type_float import BaseTypeFloat
from dbt.tests.adapter.utils.data_types.test_type_float import (
    seeds__expected_csv as float_expected_csv,
)
from dbt.tests.adapter.utils.data_types.test_type_int import BaseTypeInt
from dbt.tests.adapter.utils.data_types.test_type_int import seeds__expected_csv as int_expected_csv
from dbt.tests.adapter.utils.data_types.test_type_numeric import BaseTypeNumeric
from dbt.tests.adapter.utils.data_types.test_type_string import BaseTypeString
from dbt.tests.adapter.utils.data_types.test_type_timestamp import BaseTypeTimestamp
from dbt.tests.adapter.utils.fixture_listagg import models__test_listagg_yml
from dbt.tests.adapter.utils.test_any_value import BaseAnyValue
from dbt.tests.adapter.utils.test_array_append import BaseArrayAppend
from dbt.tests.adapter.utils.test_array_concat import BaseArrayConcat
from dbt.tests.adapter.utils.test_array_construct import BaseArrayConstruct
from dbt.tests.adapter.utils.test_bool_or import BaseBoolOr
from dbt.tests.adapter.utils.test_cast import BaseCast
from dbt.tests.adapter.utils.test_cast_bool_to_text import BaseCastBoolToText
from dbt.tests.adapter.utils.test_concat import BaseConcat
from dbt.tests.adapter.utils.test_current_timestamp import BaseCurrentTimestampNaive
from dbt.tests.adapter.utils.test_date import BaseDate
from dbt.tests.adapter.utils.test_date_trunc import BaseDateTrunc
from dbt.tests.adapter.utils.test_dateadd import BaseDateAdd
from dbt.tests.adapter.utils.test_datediff import BaseDateDiff
from dbt.tests.adapter.utils.test_equals import BaseEquals
from dbt.tests.adapter.utils.test_escape_single_quotes import BaseEscapeSingleQuotesBackslash
from dbt.tests.adapter.utils.test_except import BaseExcept
from dbt.tests.adapter.utils.test_hash import BaseHash
from dbt.tests.adapter.utils.test_intersect import BaseIntersect
from dbt.tests.adapter.utils.test_last_day import BaseLastDay
from dbt.tests.adapter.utils.test_length import BaseLength
from dbt.tests.adapter.utils.test_listagg import BaseListagg
from dbt.tests.adapter.utils.test_position import BasePosition
from dbt.tests.adapter.utils.test_replace import BaseReplace
from dbt.tests.adapter.utils.test_right import BaseRight
from dbt.tests.adapter.utils.test_safe_cast import BaseSafeCast
from dbt.tests.adapter.utils.test_split_part import BaseSplitPart
from dbt.tests.adapter.utils.test_string_literal import BaseStringLiteral
from dbt.tests.adapter.utils.test_timestamps import BaseCurrentTimestamps


@pytest.mark.extended
class TestAnyValue(BaseAnyValue):
    pass


@pytest.mark.extended
class TestArrayAppend(BaseArrayAppend):
    pass


@pytest.mark.extended
class TestArrayConcat(BaseArrayConcat):
    pass


@pytest.mark.extended
class TestArrayConstruct(BaseArrayConstruct):
    pass


@pytest.mark.extended
class TestBoolOr(BaseBoolOr):
    pass


@pytest.mark.extended
class TestCast(BaseCast):
    pass


@pytest.mark.extended
class TestCastBoolToText(BaseCastBoolToText):
    pass


@pytest.mark.extended
class TestConcat(BaseConcat):
    pass


@pytest.mark.extended
class TestCurrentTimestamp(BaseCurrentTimestampNaive):
    pass


@pytest.mark.extended
class TestCurrentTimestamps(BaseCurrentTimestamps):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "get_current_timestamp.sql": "select {{ current_timestamp() }} as current_timestamp"
        }

    @pytest.fixture(scope="class")
    def expected_schema(self):
        return {"current_timestamp": "timestamp"}

    @pytest.fixture(scope="class")
    def expected_sql(self):
        return "select current_timestamp() as current_timestamp"


@pytest.mark.extended
class TestDate(BaseDate):
    pass


@pytest.mark.extended
class TestDateAdd(BaseDateAdd):
    pass


@pytest.mark.extended
class TestDateDiff(BaseDateDiff):
    """As a table: the view's SQL (dbt-spark's datediff is long) exceeds the 32,700 characters
    that the embedded Derby metastore stores for a view's text."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+materialized": "table"}}


@pytest.mark.extended
class TestDateTrunc(BaseDateTrunc):
    pass


@pytest.mark.extended
class TestEquals(BaseEquals):
    pass


@pytest.mark.extended
class TestEscapeSingleQuotes(BaseEscapeSingleQuotesBackslash):
    pass


@pytest.mark.extended
class TestExcept(BaseExcept):
    pass


@pytest.mark.extended
class TestHash(BaseHash):
    pass


@pytest.mark.extended
class TestIntersect(BaseIntersect):
    pass


@pytest.mark.extended
class TestLastDay(BaseLastDay):
    @pytest.fixture(scope="class")
    def seeds(self):
        # Spark has no `last_day` for a blank date part.
        return {
            "data_last_day.csv": (
                "date_day,date_part,result\n"
                "2018-01-02,month,2018-01-31\n"
                "2018-01-02,quarter,2018-03-31\n"
                "2018-01-02,year,2018-12-31\n"
            )
        }


@pytest.mark.extended
class TestLength(BaseLength):
    pass


LISTAGG_UNORDERED = """
with data as (select * from {{ ref('data_listagg') }}),
data_output as (select * from {{ ref('data_listagg_output') }}),
calculate as (
    select group_col, {{ listagg('string_text', "', '") }} as actual,
        'comma_whitespace_unordered' as version
    from data where group_col = 3 group by group_col
    union all
    select group_col, {{ listagg('DISTINCT string_text', "','") }} as actual,
        'distinct_comma' as version
    from data where group_col = 3 group by group_col
    union all
    select group_col, {{ listagg('string_text') }} as actual, 'no_params' as version
    from data where group_col = 3 group by group_col
)
select calculate.actual, data_output.expected
from calculate
left join data_output
on calculate.group_col = data_output.group_col and calculate.version = data_output.version
"""


@pytest.mark.extended
class TestListagg(BaseListagg):
    """Spark's `listagg` (collect_list + array_join) has no ordering: the ordered cases of
    the base fixture cannot apply."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "test_listagg.yml": models__test_listagg_yml,
            "test_listagg.sql": self.interpolate_macro_namespace(LISTAGG_UNORDERED, "listagg"),
        }


@pytest.mark.extended
class TestPosition(BasePosition):
    pass


@pytest.mark.extended
class TestReplace(BaseReplace):
    pass


@pytest.mark.extended
class TestRight(BaseRight):
    pass


@pytest.mark.extended
class TestSafeCast(BaseSafeCast):
    pass


@pytest.mark.extended
class TestSplitPart(BaseSplitPart):
    @pytest.fixture(scope="class")
    def seeds(self):
        # Spark's split_part of an empty string is an empty string, not null.
        return {
            "data_split_part.csv": (
                "parts,split_on,result_1,result_2,result_3,result_4\n"
                "a|b|c,|,a,b,c,c\n"
                "1|2|3,|,1,2,3,3\n"
                "EMPTY|EMPTY|EMPTY,|,EMPTY,EMPTY,EMPTY,EMPTY\n"
            )
        }


@pytest.mark.extended
class TestStringLiteral(BaseStringLiteral):
    pass


class TestTypeBigInt(BaseTypeBigInt):
    pass


class TestTypeBoolean(BaseTypeBoolean):
    pass


def seed_column_type(column: str, data_type: str) -> str:
    """Seeds infer double and bigint: make the expected seed's column the tested type."""
    return (
        "version: 2\nseeds:\n  - name: expected\n    config:\n"
        f"      column_types:\n        {column}: {data_type}\n"
    )


class TestTypeFloat(BaseTypeFloat):
    @pytest.fixture(scope="class")
    def seeds(self):
        return {
            "expected.csv": float_expected_csv,
            "expected.yml": seed_column_type("float_col", "float"),
        }


class TestTypeInt(BaseTypeInt):
    @pytest.fixture(scope="class")
    def seeds(self):
        return {
            "expected.csv": int_expected_csv,
            "expected.yml": seed_column_type("int_col", "int"),
        }


class TestTypeNumeric(BaseTypeNumeric):
    def numeric_fixture_type(self):
        return "decimal(28,6)"


class TestTypeString(BaseTypeString):
    pass


class TestTypeTimestamp(BaseTypeTimestamp):
    pass
