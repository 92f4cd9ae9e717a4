"""Unit tests, concurrency, `dbt show`, `--empty`, and seeds on spark_refreshable."""

import pytest
from dbt.tests.adapter.concurrency.test_concurrency import BaseConcurrency
from dbt.tests.adapter.dbt_show.test_dbt_show import (
    BaseShowDoesNotHandleDoubleLimit,
    BaseShowLimit,
    BaseShowSqlHeader,
)
from dbt.tests.adapter.empty.test_empty import (
    BaseTestEmpty,
    BaseTestEmptyInlineSourceRef,
    BaseTestEmptySeedFlag,
)
from dbt.tests.adapter.relations.test_changing_relation_type import (
    BaseChangeRelationTypeValidator,
)
from dbt.tests.adapter.simple_seed.test_seed import BaseTestEmptySeed
from dbt.tests.adapter.store_test_failures_tests import basic
from dbt.tests.adapter.store_test_failures_tests.test_store_test_failures import (
    TEST_AUDIT_SCHEMA_SUFFIX,
    BaseStoreTestFailures,
)
from dbt.tests.adapter.unit_testing.test_case_insensitivity import BaseUnitTestCaseInsensivity
from dbt.tests.adapter.unit_testing.test_invalid_input import BaseUnitTestInvalidInput
from dbt.tests.adapter.unit_testing.test_types import BaseUnitTestingTypes
from dbt.tests.util import run_dbt
from dbt_common.exceptions import DbtRuntimeError


class TestUnitTestingTypes(BaseUnitTestingTypes):
    @pytest.fixture
    def data_types(self):
        # sql_value, yaml_value
        return [
            ["1", "1"],
            ["2.0", "2.0"],
            ["'12345'", "12345"],
            ["'string'", "string"],
            ["true", "true"],
            ["date '2011-11-11'", "2011-11-11"],
            ["timestamp '2013-11-03 00:00:00-0'", "2013-11-03 00:00:00-0"],
            ["array(1, 2, 3)", "'array(1, 2, 3)'"],
            [
                "map('10', 't', '15', 'f', '20', NULL)",
                """'map("10", "t", "15", "f", "20", NULL)'""",
            ],
            ['named_struct("a", 1, "b", 2, "c", 3)', """'named_struct("a", 1, "b", 2, "c", 3)'"""],
        ]


class TestUnitTestCaseInsensitivity(BaseUnitTestCaseInsensivity):
    pass


class TestUnitTestInvalidInput(BaseUnitTestInvalidInput):
    pass


class TestConcurrency(BaseConcurrency):
    pass


class TestShowLimit(BaseShowLimit):
    pass


class TestShowSqlHeader(BaseShowSqlHeader):
    pass


class TestShowDoesNotHandleDoubleLimit(BaseShowDoesNotHandleDoubleLimit):
    def test_double_limit_throws_syntax_error(self, project):
        # The base class searches the (truncated) repr of pytest's ExceptionInfo.
        with pytest.raises(DbtRuntimeError) as e:
            run_dbt(["show", "--limit", "1", "--inline", "select 1 limit 1"])
        assert "PARSE_SYNTAX_ERROR" in str(e.value)


class TestEmpty(BaseTestEmpty):
    pass


class TestEmptyInlineSourceRef(BaseTestEmptyInlineSourceRef):
    pass


@pytest.mark.skip(reason="`dbt seed --empty` is newer than dbt-core 1.11, which we pin")
class TestEmptySeedFlag(BaseTestEmptySeedFlag):
    pass


class TestEmptySeed(BaseTestEmptySeed):
    pass


QUOTING_SEED = "\n".join(
    [
        "id,word,amount,day",
        "1,it's,1.5,2024-01-01",
        "2,back\\slash,,2024-01-02",
        "3,,3,",
        '4,"comma, ""quote""",4.25,2024-01-04',
        "",
    ]
)


class TestSeedValues:
    """Seed values reach the table as written: quotes, backslashes, and empty cells (NULL)
    in string, number and date columns."""

    @pytest.fixture(scope="class")
    def seeds(self):
        return {"values.csv": QUOTING_SEED}

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"seeds": {"+file_format": "delta"}}

    def test_seed_values(self, project):
        run_dbt(["seed"])
        rows = project.run_sql(
            f"select id, word, cast(amount as string), cast(day as string) "
            f"from {project.test_schema}.values order by id",
            fetch="all",
        )
        assert [tuple(row) for row in rows] == [
            (1, "it's", "1.5", "2024-01-01"),
            (2, "back\\slash", None, "2024-01-02"),
            (3, None, "3.0", None),
            (4, 'comma, "quote"', "4.25", "2024-01-04"),
        ]


class TestChangeRelationType(BaseChangeRelationTypeValidator):
    """view -> table -> view -> incremental -> table, on Delta."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+file_format": "delta"}}


class TestStoreTestFailures(BaseStoreTestFailures):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "seeds": {"quote_columns": False, "test": self.column_type_overrides()},
            "data_tests": {"+schema": TEST_AUDIT_SCHEMA_SUFFIX, "+file_format": "delta"},
        }


@pytest.mark.extended
class TestStoreTestFailuresAsInteractions(basic.StoreTestFailuresAsInteractions):
    pass


@pytest.mark.extended
class TestStoreTestFailuresAsProjectLevelOff(basic.StoreTestFailuresAsProjectLevelOff):
    pass


@pytest.mark.extended
class TestStoreTestFailuresAsProjectLevelView(basic.StoreTestFailuresAsProjectLevelView):
    pass


@pytest.mark.extended
class TestStoreTestFailuresAsProjectLevelEphemeral(basic.StoreTestFailuresAsProjectLevelEphemeral):
    pass


@pytest.mark.extended
class TestStoreTestFailuresAsGeneric(basic.StoreTestFailuresAsGeneric):
    pass


@pytest.mark.extended
class TestStoreTestFailuresAsExceptions(basic.StoreTestFailuresAsExceptions):
    pass
