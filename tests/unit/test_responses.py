"""The job contract: the request the materialization sends, and what dbt reports of the
engine's result (the adapter response)."""

from __future__ import annotations

import pytest
from dbt.adapters.contracts.connection import AdapterResponse

from dbt.adapters.spark_refreshable.engine.job import RefreshRequest, RefreshResult
from dbt.adapters.spark_refreshable.responses import RefreshAdapterResponse, response_for


def test_a_refresh_result_becomes_the_adapter_response_with_its_compaction():
    result = RefreshResult(
        message="REFRESHED +1 ~2 -0 =3 in 1/1 chunk(s)",
        refresh_id="r1",
        rows_inserted=1,
        rows_updated=2,
        main_compacted=[16, 1],
        diff_read_main=True,  # the engine's own detail: not reported
    )
    response = response_for(result)
    assert isinstance(response, RefreshAdapterResponse)
    assert response.rows_inserted == 1 and response.main_compacted == [16, 1]
    assert response.rows_affected == 3 and response.refresh_id == "r1"
    assert response._message.startswith("REFRESHED")
    assert "diff_read_main" not in response.to_dict()
    assert response_for(RefreshResult(refresh_id="r2")).main_compacted is None


def test_the_scratch_tables_vacuum_is_in_the_adapter_response_and_survives_its_json():
    response = response_for(RefreshResult(refresh_id="r3", scratch_vacuumed={"staging": 12}))
    assert response.scratch_vacuumed == {"staging": 12}
    assert RefreshAdapterResponse.from_dict(response.to_dict()).scratch_vacuumed == {"staging": 12}
    assert response_for(RefreshResult(refresh_id="r4")).scratch_vacuumed is None


def test_another_python_models_result_is_reported_as_ok():
    for other in (None, {"refresh_id": "r1"}, "done"):
        response = response_for(other)
        assert type(response) is AdapterResponse and response._message == "OK"


def test_the_request_is_read_as_the_macro_sends_it():
    sent = {
        "model": "model.p.orders",
        "schema": "s",
        "identifier": "orders",
        "config": {"unique_key": ["id"]},
        "full_refresh": False,
        "empty": False,
        "invocation_id": None,
        "sql": "select 1 as id",
    }
    request = RefreshRequest.from_json(sent)
    assert request.identifier == "orders" and request.sql == "select 1 as id"
    assert request.invocation_id == "unknown"
    with pytest.raises(ValueError, match=r"no field\(s\) \['schmea'\]"):
        RefreshRequest.from_json({**sent, "schmea": "t"})
