"""Case study 9 of docs/diagnosis.md#case-studies: a Counter64 wrap and a reboot."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from tests.scenarios.regression.builder import Scenario, healthy_pair, iso, scenario
from tests.scenarios.regression.counters import Counter64Port, octets_before_wrap


# --------------------------------------------------------------------------- case 9
@scenario(
    "case9-counter-wrap-and-reboot",
    datetime(2026, 3, 11, 0, 0, tzinfo=UTC),
    carriers=("GEANT", "DFN"),
    sites=("CERN", "FZK"),
    routers=("cern-border", "geant-gva", "geant-fra"),
)
def scenario_case9(sc: Scenario) -> None:
    """Case study 9 (counter wrap and reset). dfn-fra's 10 Gb/s port xe-2/0/0 (from GEANT, carrying CERN->FZK) is
    polled every 60 s with Counter64; its ifHCInOctets started close to 2^64 and wraps at 01:30 while the port
    carries 5.5-8.3 Gb/s (a wrap-safe rate is 5.5-8.3 Gb/s, a naive one negative or ~2.5e21 bit/s). At 04:02:40 the
    router reboots: polls fail until 04:08, when sysUpTime is 3.2 min and every counter restarted from zero; the
    interval across the reboot is discarded. The FZK-facing port xe-2/1/0 resets with it. The reboot costs one owamp
    session (04:05) in each direction, nothing more. Utilisation never reaches 90 %.
    """
    sc.router("dfn-fra", carrier="DFN", model="MX960")
    sc.router("fzk-border", site="FZK", vendor="Cisco", model="Nexus 7700")
    sc.interface("dfn-fra", "xe-2/0/0", 2000, 10000)
    sc.interface("dfn-fra", "xe-2/1/0", 2100, 10000)
    sc.path(
        "CERN",
        "FZK",
        10000,
        ["cern-border", "geant-gva", "geant-fra", "dfn-fra:xe-2/0/0", "dfn-fra:xe-2/1/0", "fzk-border"],
    )
    down_from, up_at = sc.at("04:02:40"), sc.at("04:04:50")
    healthy_pair(sc, "CERN", "FZK", rtt_ms=9.8, cap_bps=10e9, owamp_offset_s=0)
    # the reboot: the owamp sessions running while the router is down lose every packet
    for m in sc.measurements:
        if m["type"] == "owamp" and m["time"] == iso(sc.at("04:05")):
            for key in ("delay_min_ms", "delay_median_ms", "delay_max_ms", "jitter_ms"):
                m.pop(key, None)
            m["packets_lost"] = m["packets_sent"]

    # load: a slow swing plus minute-to-minute noise, 5.5-8.3 Gb/s into xe-2/0/0 (per 60 s poll interval)
    polls = sc.every(1)
    load = {
        t: min(8.3e9, max(5.5e9, 6.9e9 + 0.9e9 * math.sin(i / 78) + sc.rng.gauss(0, 0.2e9)))
        for i, t in enumerate(polls)
    }
    wrap_at = sc.at("01:30")
    # ifHCInOctets starts where the traffic of the polls up to 01:29 and a half brings it to 2^64
    start_in = octets_before_wrap(polls, load, wrap_at)
    ge = Counter64Port("dfn-fra", "xe-2/0/0", 86400 * 211.4, start_in, 4_411_006_219_338_770, mean_frame_bytes=1200)
    fz = Counter64Port(
        "dfn-fra", "xe-2/1/0", 86400 * 211.4, 3_098_117_466_002_118, 14_002_337_190_054_441, mean_frame_bytes=1200
    )
    boot_poll, port_up_s = sc.at("04:08"), 100.0
    for i, t in enumerate(polls):
        if down_from < t < boot_poll:
            continue  # the router is rebooting: polls time out
        if t == boot_poll:
            for port in (ge, fz):
                port.reboot(uptime_s=(t - up_at).total_seconds() - port_up_s)
            ge.advance(port_up_s, load[t], 2.0e9)  # the ports count from the moment they came up
            fz.advance(port_up_s, 2.0e9, load[t] * 0.97)
        elif i:
            before = ge.c["hc_in_octets"]
            ge.advance(60, load[t], 2.0e9 + sc.rng.gauss(0, 0.1e9))
            fz.advance(60, 2.0e9 + sc.rng.gauss(0, 0.1e9), load[t] * 0.97)
            assert (ge.c["hc_in_octets"] < before) == (t == wrap_at), f"unexpected wrap state at {t}"
        ge.poll(sc, t)
        fz.poll(sc, t + timedelta(seconds=1))

    sc.want("COUNTER_DISCONTINUITY", equipment="dfn-fra", interface="xe-2/0/0")
    sc.want("COUNTER_DISCONTINUITY", equipment="dfn-fra", interface="xe-2/1/0")
    sc.forbid_codes(
        "LINK_CONGESTION",
        "PATH_DOWN",
        "UNEXPLAINED_DEGRADATION",
        "INTERFACE_ERRORS",
        "SHARED_EQUIPMENT_SUSPECT",
        "LOSS_LIMITED",
    )
