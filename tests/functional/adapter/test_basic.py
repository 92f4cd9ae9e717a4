"""dbt's basic adapter conformance suite against spark_refreshable on the embedded engine."""

import pytest
from dbt.tests.adapter.basic.test_adapter_methods import BaseAdapterMethod
from dbt.tests.adapter.basic.test_base import BaseSimpleMaterializations
from dbt.tests.adapter.basic.test_empty import BaseEmpty
from dbt.tests.adapter.basic.test_ephemeral import BaseEphemeral
from dbt.tests.adapter.basic.test_generic_tests import BaseGenericTests
from dbt.tests.adapter.basic.test_incremental import (
    BaseIncremental,
    BaseIncrementalNotSchemaChange,
)
from dbt.tests.adapter.basic.test_singular_tests import BaseSingularTests
from dbt.tests.adapter.basic.test_singular_tests_ephemeral import BaseSingularTestsEphemeral
from dbt.tests.adapter.basic.test_snapshot_check_cols import BaseSnapshotCheckCols
from dbt.tests.adapter.basic.test_snapshot_timestamp import BaseSnapshotTimestamp
from dbt.tests.adapter.basic.test_table_materialization import BaseTableMaterialization
from dbt.tests.adapter.basic.test_validate_connection import BaseValidateConnection

from tests.functional.adapter.delta import delta_project

# `make test-all`: the incremental and snapshot materializations are dbt-spark's, whose macros
# the plugin does not override (like test_incremental.py); the connection, seeds and relation
# listing they go through, which the plugin does override, the gate's tests here prove
DBT_SPARK_OWNS = pytest.mark.extended


class TestSimpleMaterializations(BaseSimpleMaterializations):
    pass


class TestSimpleMaterializationsDelta(BaseSimpleMaterializations):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return delta_project("base")


class TestSingularTests(BaseSingularTests):
    pass


class TestSingularTestsEphemeral(BaseSingularTestsEphemeral):
    pass


class TestEmpty(BaseEmpty):
    pass


class TestEphemeral(BaseEphemeral):
    pass


@DBT_SPARK_OWNS
class TestIncremental(BaseIncremental):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return delta_project("incremental")


@DBT_SPARK_OWNS
class TestIncrementalNotSchemaChange(BaseIncrementalNotSchemaChange):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return delta_project("incremental")


class TestGenericTests(BaseGenericTests):
    pass


@DBT_SPARK_OWNS
class TestSnapshotCheckCols(BaseSnapshotCheckCols):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return delta_project("snapshot_strategy_check_cols")


@DBT_SPARK_OWNS
class TestSnapshotTimestamp(BaseSnapshotTimestamp):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return delta_project("snapshot_strategy_timestamp")


class TestAdapterMethod(BaseAdapterMethod):
    pass


class TestTableMaterialization(BaseTableMaterialization):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return delta_project()


class TestValidateConnection(BaseValidateConnection):
    pass
