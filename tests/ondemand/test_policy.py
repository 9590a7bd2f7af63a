"""The policy of tests on demand, rule by rule: each refusal names its rule and says why in numbers (pure)."""

from __future__ import annotations

from wanmon.ondemand.policy import Limits, PathState, Rule, TestRequest, job_bytes, policy_check

LIMITS = Limits(max_duration_s=30, max_rate_bps=2e9, budget_bytes_per_hour=50 * 10**9, unlimited_tcp_bps=10e9)
PAIR = "CERN<->FZK"
TCP_10S = TestRequest(kind="throughput", protocol="tcp", duration_s=10, capacity_bps=10e9)


def test_a_test_within_every_rule_passes_and_counts_its_bytes():
    assert policy_check(TCP_10S, PathState(), LIMITS, pair=PAIR) is None
    # TCP without a rate limit counts the path's capacity for its duration: 10 Gb/s x 10 s = 12.5 GB
    assert job_bytes(TCP_10S, LIMITS) == 12_500_000_000
    # UDP counts its offered rate; an unknown capacity counts the unlimited TCP rate
    assert job_bytes(TestRequest(kind="throughput", protocol="udp", duration_s=5, rate_bps=1e9), LIMITS) == 625_000_000
    assert job_bytes(TestRequest(kind="throughput", duration_s=10), LIMITS) == 12_500_000_000
    assert job_bytes(TestRequest(kind="owamp", duration_s=60), LIMITS) == 600_000
    assert job_bytes(TestRequest(kind="tracepath"), LIMITS) == 65_536


def test_duration_cap():
    refusal = policy_check(TestRequest(kind="throughput", duration_s=60), PathState(), LIMITS, pair=PAIR)
    assert (refusal.rule, refusal.status) == (Rule.DURATION_CAP, 422)
    assert refusal.reason == "duration_cap: 60 s is longer than the 30 s a test on demand may last"


def test_rate_cap():
    request = TestRequest(kind="throughput", protocol="udp", duration_s=10, rate_bps=5e9)
    refusal = policy_check(request, PathState(), LIMITS, pair=PAIR)
    assert (refusal.rule, refusal.status) == (Rule.RATE_CAP, 422)
    assert refusal.reason == "rate_cap: 5000 Mb/s is above the 2000 Mb/s a test on demand may send"


def test_maintenance():
    refusal = policy_check(TCP_10S, PathState(maintenance=("GEANT-CHG-0042",)), LIMITS, pair=PAIR)
    assert (refusal.rule, refusal.status) == (Rule.MAINTENANCE, 409)
    assert refusal.reason == (
        "maintenance: CERN<->FZK is under announced maintenance (GEANT-CHG-0042); a test now would measure the work"
    )
    # a route test is refused too: the path is being worked on
    assert policy_check(TestRequest(kind="tracepath"), PathState(maintenance=("X",)), LIMITS, pair=PAIR).rule == (
        Rule.MAINTENANCE
    )


def test_one_heavy_test_at_a_time():
    refusal = policy_check(TCP_10S, PathState(heavy_job_id=17), LIMITS, pair=PAIR)
    assert (refusal.rule, refusal.status) == (Rule.ONE_HEAVY_TEST, 409)
    assert refusal.reason == (
        "one_heavy_test: throughput test 17 is already queued or running on CERN<->FZK; one at a time"
    )
    # owamp and route tests are light: they may run beside a throughput test
    assert policy_check(TestRequest(kind="owamp", duration_s=10), PathState(heavy_job_id=17), LIMITS, pair=PAIR) is None


def test_byte_budget():
    # 40 GB used in the last hour; 12.5 GB more would exceed the 50 GB
    refusal = policy_check(TCP_10S, PathState(bytes_last_hour=40 * 10**9), LIMITS, pair=PAIR)
    assert (refusal.rule, refusal.status) == (Rule.BYTE_BUDGET, 409)
    assert refusal.reason == (
        "byte_budget: CERN<->FZK has used 40 GB of its 50 GB per hour for tests on demand; this test needs 12.5 GB"
    )
    # exactly up to the budget is allowed
    assert policy_check(TCP_10S, PathState(bytes_last_hour=37_500_000_000), LIMITS, pair=PAIR) is None


def test_the_first_broken_rule_is_named_bounds_before_state():
    busy = PathState(bytes_last_hour=10**12, heavy_job_id=3, maintenance=("W",))
    too_long = TestRequest(kind="throughput", duration_s=31)
    assert policy_check(too_long, busy, LIMITS, pair=PAIR).rule == Rule.DURATION_CAP
    assert policy_check(TCP_10S, busy, LIMITS, pair=PAIR).rule == Rule.MAINTENANCE
