"""Chunk planning: contiguous vnode ranges, sized by rows, covering every vnode once."""

from dbt.adapters.spark_refreshable.engine.progress import plan_chunks


def covered(chunks):
    return [v for c in chunks for v in range(c.first_vnode, c.last_vnode + 1)]


def test_small_table_is_one_chunk():
    chunks = plan_chunks({v: 4 for v in range(256)}, 256, 1_000_000)
    assert len(chunks) == 1 and covered(chunks) == list(range(256))
    assert chunks[0].rows == 1024


def test_chunk_count_follows_rows():
    vnode_rows = {v: 1000 for v in range(256)}  # 256k rows
    chunks = plan_chunks(vnode_rows, 256, 32_000)
    assert len(chunks) == 8
    assert all(c.rows <= 32_000 for c in chunks)
    assert covered(chunks) == list(range(256))
    assert [c.index for c in chunks] == list(range(8))


def test_a_vnode_larger_than_a_chunk_is_a_chunk_of_its_own():
    chunks = plan_chunks({0: 10, 1: 500, 2: 10}, 3, 100)
    assert [(c.first_vnode, c.last_vnode, c.rows) for c in chunks] == [
        (0, 0, 10),
        (1, 1, 500),
        (2, 2, 10),
    ]


def test_empty_snapshot_still_plans_every_vnode():
    chunks = plan_chunks({}, 16, 100)
    assert len(chunks) == 1 and covered(chunks) == list(range(16))
