"""What dbt reports of a refresh: the engine's result as the adapter response."""

from __future__ import annotations

from dbt.adapters.spark_refreshable.responses import RefreshAdapterResponse, response_for


def test_a_refresh_result_becomes_the_adapter_response_with_its_compaction():
    result = {
        "_message": "REFRESHED +1 ~0 -0 =3 in 1/1 chunk(s)",
        "refresh_id": "r1",
        "rows_inserted": 1,
        "main_compacted": [16, 1],
        "diff_read_main": False,  # the engine's own detail: not reported
    }
    response = response_for(result)
    assert isinstance(response, RefreshAdapterResponse)
    assert response.rows_inserted == 1 and response.main_compacted == [16, 1]
    assert response._message.startswith("REFRESHED")
    assert response_for({"_message": "REFRESHED", "refresh_id": "r2"}).main_compacted is None
