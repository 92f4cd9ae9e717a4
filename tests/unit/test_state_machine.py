"""The state machine's transitions and the owner liveness rules."""

import os
import time

from dbt.adapters.spark_refreshable.engine.owners import Owner, owner_is_alive
from dbt.adapters.spark_refreshable.engine.state import TRANSITIONS, Phase, State


def test_the_cycle_is_the_only_way_round():
    assert TRANSITIONS[Phase.IDLE] == {Phase.REFRESHING}
    assert TRANSITIONS[Phase.REFRESHING] == {Phase.FINISHING, Phase.IDLE}
    assert TRANSITIONS[Phase.FINISHING] == {Phase.IDLE, Phase.REFRESHING}  # done, discard
    assert TRANSITIONS[Phase.CLEANUP] == {Phase.IDLE}  # a state left by 0.1.0
    assert not any(Phase.CLEANUP in targets for targets in TRANSITIONS.values())


def held_by(owner: Owner, heartbeat_age: float, **changes) -> State:
    return State(
        phase="FINISHING",
        owner_id=owner.owner_id,
        owner_host=owner.host,
        owner_pid=owner.pid,
        owner_pid_started=owner.pid_started,
        owner_invocation=owner.invocation,
        heartbeat_at=time.time() - heartbeat_age,
        **changes,
    )


me = Owner.this_process("me")


def test_released_lease_has_no_live_owner():
    assert not owner_is_alive(State(phase="FINISHING"), me, 300, time.time())


def test_remote_owner_is_alive_until_its_heartbeat_is_older_than_lock_timeout():
    remote = Owner("x", "another-host", 123, "1", "inv")
    assert owner_is_alive(held_by(remote, 10), me, 300, time.time())
    assert not owner_is_alive(held_by(remote, 331), me, 300, time.time())


def test_the_owners_own_lease_duration_decides_with_a_margin_for_clock_skew():
    """Issue 10 item 4: a reader with a smaller lock_timeout does not take over early."""
    remote = Owner("x", "another-host", 123, "1", "inv")
    owned_for_600 = held_by(remote, 400, lease_timeout=600.0)
    assert owner_is_alive(owned_for_600, me, 300, time.time())
    assert owner_is_alive(held_by(remote, 305, lease_timeout=300.0), me, 300, time.time())
    assert not owner_is_alive(held_by(remote, 700, lease_timeout=600.0), me, 300, time.time())


def test_local_owner_whose_process_is_gone_is_gone_at_once():
    child = os.fork()
    if child == 0:
        os._exit(0)
    os.waitpid(child, 0)
    dead = Owner("x", me.host, child, "1", "inv")
    assert not owner_is_alive(held_by(dead, 0), me, 300, time.time())


def test_local_owner_with_a_reused_pid_is_gone():
    parent = os.getppid()  # alive, but started at another time than the recorded owner
    impostor = Owner("x", me.host, parent, "not-its-start-time", "inv")
    assert not owner_is_alive(held_by(impostor, 0), me, 300, time.time())


def test_owner_in_this_process_is_alive_only_while_its_run_is_active():
    earlier_run = Owner("finished-run", me.host, me.pid, me.pid_started, "inv")
    assert not owner_is_alive(held_by(earlier_run, 0), me, 300, time.time())
