"""The newest test of a window waits for the poll that measures its room, when that poll is due.

At the cycle's minute the test that ran seconds ago has no poll covering it yet: judged without its load it is
judged against the path's level, and the newest test of a busy afternoon (1.5 Gb/s left on a 10G port at 85 %)
reads as a collapse against a night's level. It is judged at the next cycle, with its room. A port whose polls
stopped is not waited for.
"""

from __future__ import annotations

from tests.diagnosis.builders import NOW, at, bundle, every, iface, path, rate_row, tcp
from wanmon.diagnosis.assessment import assess_path

HOPS = ("ral-border:et-0/0/0", "geant-lon", "cnaf-border")


def assessed(last_poll_min: float, test_min: float = 357.0):
    polls = every(5, lambda m: rate_row(m, out_bps=8.5e9, interval_s=300.0), start=5, end=last_poll_min)
    tests = [*every(30, lambda m: tcp(m, 1.5e9), start=0, end=330), tcp(test_min, 1.5e9)]
    p = path("RAL", "CNAF", 10e9, HOPS, tests)
    b = bundle(p, interfaces=(iface("ral-border", "et-0/0/0", 10e9, polls),))
    return assess_path(b.paths[0], b, NOW)


def test_a_test_whose_poll_is_due_is_judged_at_the_next_cycle():
    a = assessed(last_poll_min=355)
    assert at(357) not in {f.test.time for f in a.tcp}
    assert all(f.spare_bps is not None for f in a.tcp)


def test_with_its_poll_in_the_test_is_judged_with_its_room():
    a = assessed(last_poll_min=360, test_min=349)
    (last,) = [f for f in a.tcp if f.test.time == at(349)]
    assert last.spare_bps == 1.5e9


def test_a_port_whose_polls_stopped_is_not_waited_for():
    a = assessed(last_poll_min=300)
    (last,) = [f for f in a.tcp if f.test.time == at(357)]
    assert last.spare_bps is None
