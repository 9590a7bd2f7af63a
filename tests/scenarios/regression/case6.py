"""Case study 6 of docs/diagnosis.md#case-studies: a loss-limited OC-12."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.scenarios.noise.noise import poisson
from tests.scenarios.regression.builder import MiB, Scenario, mathis_bps, scenario, segments

# --------------------------------------------------------------------------- case 6
#: The Mathis constant of the case study's own measurement (its description computes with it).
MATHIS_C_CASE6 = 0.7


@scenario(
    "case6-loss-limited-oc12-tau",
    datetime(2026, 3, 8, 0, 0, tzinfo=UTC),
    carriers=("GEANT", "IUCC"),
    sites=("CERN", "TAU"),
    routers=("cern-border", "geant-gva", "geant-mil", "iucc-mil", "iucc-tlv", "tau-border"),
)
def scenario_case6(sc: Scenario) -> None:
    """Case study 6 (loss-limited path). CERN<->TAU over an OC-12 (622 Mb/s) circuit with a marginal optic: bit error
    rate ~1e-9, so 8000-byte UDP datagrams are lost at 6.4e-5 (5 of 78110 per 500 Mb/s test) and jumbo TCP segments
    alike, while 600 small owamp packets per session see nothing. With MSS 8948 and RTT 72 ms Mathis gives 0.7 *
    8948 * 8 / (0.072 * sqrt(6.4e-5)) = 87 Mb/s, and that is what TCP reaches, far below the 622 Mb/s capacity and
    the 1.86 Gb/s window limit of the 16 MiB window. A chronic condition: it holds over the whole timeline.
    """
    sc.interface("iucc-mil", "so-1/0/0", 300, 622, mtu=9180)
    sc.path(
        "CERN", "TAU", 622, ["cern-border", "geant-gva", "geant-mil", "iucc-mil:so-1/0/0", "iucc-tlv", "tau-border"]
    )
    mss, window, rtt = 8948, 16 * MiB, 72.0
    sent = 78110  # 500 Mb/s for 10 s in 8000-byte datagrams
    # Poisson(5) draws that sum to 5 per test exactly: the file's loss is 5/78110 = 6.4e-5
    lost_seq = {"CERN": [5, 4, 6, 5, 7, 3, 5, 6, 4, 5, 5, 5], "TAU": [6, 5, 4, 5, 3, 6, 5, 7, 4, 5, 5, 5]}
    p = 5 / sent
    for src, dst in (("CERN", "TAU"), ("TAU", "CERN")):
        off = 0 if src == "CERN" else 45
        for i, t in enumerate(sc.every(30, off)):
            r = sc.jitter(rtt, 0.003)
            thr = mathis_bps(mss, r, p, c=MATHIS_C_CASE6) * sc.rng.uniform(0.9, 1.1)
            sc.tcp(
                t,
                src,
                dst,
                thr,
                rtt_ms=r,
                mss=mss,
                window=window,
                retransmits=poisson(sc.rng, p * segments(thr, 10, mss)),
            )
            if t + timedelta(minutes=15) < sc.now:
                sc.udp(t + timedelta(minutes=15), src, dst, 500e6, sent, lost_seq[src][i], datagram_bytes=8000)
        for t in sc.every(5, 100 + off):
            sc.quiet_owamp(t, src, dst, rtt, lost=0)

    sc.want_both_ways("LOSS_LIMITED", "CERN", "TAU")
    sc.forbid_codes(
        "WINDOW_LIMITED",
        "ASYMMETRIC_PATH",
        "UNEXPLAINED_DEGRADATION",
        "MTU_MISMATCH",
        "TCP_ONLY_DEGRADATION",
        "PATH_DOWN",
        "PERIODIC_LOSS",
    )
