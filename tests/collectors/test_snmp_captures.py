"""The SNMP collector against six real routers: LibreNMS captures replayed by snmpsim on 127.0.0.1.

The captures are ../shared/fixtures/snmprec/*.snmprec (SOURCES.md there): Junos SRX240, IOS XR
ASR 9010, Nokia 7210 SAS (SR OS), Arista 7050TX, Nexus 3064PQ and a Ciena 6500 shelf, 357
interfaces in all. They are third-party data: read from ../shared, never copied into the
repository; the variants below (sysUpTime.0 or the engine OIDs removed, a name made shared) are
written to a temporary directory. Every counter the collector reports is compared with the file.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest

from collectors.counters import TIMETICKS_MODULUS
from collectors.records import record_errors
from collectors.snmp import (
    COUNTER_COLUMNS,
    IF_NAME,
    IF_TYPE,
    SNMP_ENGINE_BOOTS,
    SNMP_ENGINE_TIME,
    SYS_UPTIME,
    DevicePoll,
    SnmpDeviceConfig,
    SnmpPoller,
    index_column,
)
from tests.collectors.snmpsim.simulator import SnmpSimulator

pytest.importorskip("snmpsim", reason="snmpsim (dev extra) is needed for the SNMP simulator tests")
pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = ROOT.parent / "shared" / "fixtures" / "snmprec"
NOW = datetime(2026, 3, 1, 11, 1, tzinfo=UTC)

# Interfaces per capture, and how many the default selection keeps (require_octet_counters):
# only the ASR 9010 has interfaces without any octet counter (2 loopbacks, 8 dwdm controllers).
DEVICES = {
    "junos_rpm": (59, 59),
    "iosxr_asr9010": (100, 90),
    "timos": (14, 14),
    "arista_eos": (55, 55),
    "nxos_n3k-3064pq": (54, 54),
    "ciena-rls_6500-r2": (75, 75),
}
IOSXR_WITHOUT_OCTETS = [
    "Loopback0",
    "Loopback99",
    "dwdm0/7/0/0",
    "dwdm0/7/0/1",
    "dwdm0/7/0/2",
    "dwdm0/7/0/3",
    "dwdm0/0/0/0",
    "dwdm0/0/0/1",
    "dwdm0/0/0/2",
    "dwdm0/0/0/3",
]
JUNOS_MTU_WARNING = (
    "ifMtu: not a number within 0..65536, left out (ifIndex 6 2147483647, ifIndex 7 2147483647, "
    "ifIndex 8 2147483647, ifIndex 9 2147483647, ifIndex 10 2147483647 and 11 more)"
)


def parse_snmprec(path: Path) -> dict[str, int | bytes]:
    """OID -> value of an snmpsim data file (integers, and octet strings plain or hex)."""
    values: dict[str, int | bytes] = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        oid, tag, value = line.split("|", 2)
        if tag == "4":
            values[oid] = value.encode()
        elif tag == "4x":
            values[oid] = bytes.fromhex(value)
        elif tag in ("2", "65", "66", "67", "70"):
            values[oid] = int(value)
    return values


def column(values: dict[str, int | bytes], oid: str) -> dict[int, int | bytes]:
    return index_column(oid, {k: v for k, v in values.items() if k.startswith(oid + ".")})


def write_variant(source: Path, target: Path, *, drop: tuple[str, ...] = (), replace: dict[str, str] | None = None):
    """``source`` without the lines of the OIDs in ``drop``, with ``replace`` (OID -> new line)."""
    lines = []
    for line in source.read_text(encoding="utf-8", errors="replace").splitlines():
        oid = line.split("|", 1)[0]
        if oid in drop:
            continue
        lines.append((replace or {}).get(oid, line))
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


ENGINE = (SNMP_ENGINE_BOOTS, SNMP_ENGINE_TIME)


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    if not CAPTURES.is_dir():
        pytest.skip("real router captures absent (../shared/fixtures/snmprec)")
    variants = tmp_path_factory.mktemp("snmprec")
    arista = CAPTURES / "arista_eos.snmprec"
    files = [CAPTURES / f"{name}.snmprec" for name in DEVICES] + [
        write_variant(CAPTURES / "junos_rpm.snmprec", variants / "junos-no-sysuptime.snmprec", drop=(SYS_UPTIME,)),
        write_variant(CAPTURES / "junos_rpm.snmprec", variants / "junos-no-clock.snmprec", drop=(SYS_UPTIME, *ENGINE)),
        write_variant(
            CAPTURES / "ciena-rls_6500-r2.snmprec", variants / "ciena-no-clock.snmprec", drop=(SYS_UPTIME, *ENGINE)
        ),
        # Ethernet2 (ifIndex 2) reports Ethernet1's name, as agents with colliding ifName values do
        write_variant(
            arista, variants / "arista-shared-name.snmprec", replace={f"{IF_NAME}.2": f"{IF_NAME}.2|4|Ethernet1"}
        ),
    ]
    # start() raises with the responder's log when it does not come up; leaving the block stops it for sure
    with SnmpSimulator(data_files=files) as simulator:
        yield simulator


def device(sim: SnmpSimulator, community: str, **options) -> SnmpDeviceConfig:
    base = {"equipment": community.replace("_", "-"), "host": sim.host, "port": sim.port, "community": community}
    return SnmpDeviceConfig(**{**base, "timeout_s": 5.0, "retries": 2, "max_repetitions": 50, **options})


def poll_all(configs: list[SnmpDeviceConfig], rounds: int = 1) -> list[list[DevicePoll]]:
    async def run():
        async with SnmpPoller() as poller:
            return [await poller.poll_devices(configs, now=NOW) for _ in range(rounds)]

    return asyncio.run(run())


def expected_counters(values: dict[str, int | bytes], if_index: int) -> dict[str, int]:
    """The counters the record must carry, straight from the file (32-bit octets only without HC ones)."""
    counters = {name: column(values, oid).get(if_index) for name, oid in COUNTER_COLUMNS.items()}
    for narrow, wide in (("in_octets", "hc_in_octets"), ("out_octets", "hc_out_octets")):
        if counters[wide] is not None:
            counters[narrow] = None
    return {name: value for name, value in counters.items() if value is not None}


def test_default_selection_keeps_every_interface_with_octet_counters_and_their_exact_values(sim):
    (polls,) = poll_all([device(sim, name) for name in DEVICES])

    by_device = {poll.equipment: poll for poll in polls}
    assert all(poll.ok for poll in polls), [poll.error for poll in polls]
    assert {name: len(by_device[name.replace("_", "-")].records) for name in DEVICES} == {
        name: kept for name, (_, kept) in DEVICES.items()
    }
    assert sum(len(poll.records) for poll in polls) == 347  # of 357 interfaces
    iosxr = by_device["iosxr-asr9010"]
    names = {r.interface for r in iosxr.records}
    assert not names & set(IOSXR_WITHOUT_OCTETS)

    # a few values as the files have them, to the last digit
    def counters(equipment: str, interface: str):
        (record,) = [r for r in by_device[equipment].records if r.interface == interface]
        return record.counters

    assert counters("timos", "1/1/1").hc_in_octets == 5680098420082678  # above 2^48
    assert counters("iosxr-asr9010", "TenGigE0/0/0/0").hc_in_octets == 52129201677884
    assert counters("iosxr-asr9010", "TenGigE0/0/0/0").in_discards == 48753
    assert counters("junos-rpm", "ge-0/0/7").hc_out_octets == 490120348210
    assert counters("arista-eos", "Ethernet47").hc_in_ucast_pkts == 27282806667
    assert counters("ciena-rls-6500-r2", "vdp").in_octets == 4252958467  # Counter32, no ifXTable
    assert counters("ciena-rls-6500-r2", "vdp").hc_in_octets is None
    assert counters("nxos-n3k-3064pq", "port-channel10").hc_in_octets == 31193445858

    # and every counter of every record, compared with the file
    for name in DEVICES:
        values = parse_snmprec(CAPTURES / f"{name}.snmprec")
        poll = by_device[name.replace("_", "-")]
        for record in poll.records:
            reported = {k: getattr(record.counters, k) for k in COUNTER_COLUMNS}
            reported = {k: v for k, v in reported.items() if v is not None}
            assert reported == expected_counters(values, record.if_index), (name, record.interface)
            assert record.sys_uptime_ticks == values[SYS_UPTIME]
            assert record_errors(record, now=NOW) == []


def test_selection_keys_on_real_devices(sim):
    configs = [
        device(sim, "arista_eos", equipment="arista-up", admin_status=["up"]),
        device(sim, "timos", equipment="timos-lags", if_types=["ieee8023adLag"]),
        device(sim, "iosxr_asr9010", equipment="iosxr-eth-up", if_types=["ethernetCsmacd"], admin_status=["up"]),
        device(sim, "nxos_n3k-3064pq", equipment="nxos-ports", include=["Ethernet1/*"], exclude=["Ethernet1/4?"]),
        device(sim, "iosxr_asr9010", equipment="iosxr-all", require_octet_counters=False),
    ]

    (polls,) = poll_all(configs)

    counts = {poll.equipment: len(poll.records) for poll in polls}
    assert counts == {"arista-up": 16, "timos-lags": 3, "iosxr-eth-up": 20, "nxos-ports": 42, "iosxr-all": 100}
    assert [r.interface for r in polls[1].records] == ["lag-1", "lag-2", "lag-3"]
    assert {r.admin_status for r in polls[0].records} == {"up"}
    without_octets = [r for r in polls[4].records if r.interface in IOSXR_WITHOUT_OCTETS]
    assert len(without_octets) == 10
    assert not [r for r in without_octets if r.counters.hc_in_octets is not None or r.counters.in_octets is not None]


def test_without_sysuptime_the_engine_time_is_the_uptime_and_the_device_says_so_once(sim):
    junos = parse_snmprec(CAPTURES / "junos_rpm.snmprec")
    engine_ticks = junos[SNMP_ENGINE_TIME] * 100 % TIMETICKS_MODULUS  # 11931849 s

    first, second = (polls[0] for polls in poll_all([device(sim, "junos-no-sysuptime")], rounds=2))

    assert first.ok and len(first.records) == 59
    assert {r.sys_uptime_ticks for r in first.records} == {engine_ticks} == {1193184900}
    assert first.uptime_source == "snmpEngineTime.0"
    restart = [w for w in first.warnings if "restart detection is limited" in w]
    assert len(restart) == 1 and "snmpEngineTime.0" in restart[0]
    assert second.warnings == () and restart[0] in second.repeated
    assert [r.counters.hc_in_octets for r in first.records] == [r.counters.hc_in_octets for r in second.records]


def test_without_any_clock_the_counters_are_kept_without_sys_uptime(sim):
    junos_polls, ciena_polls = zip(
        *poll_all([device(sim, "junos-no-clock"), device(sim, "ciena-no-clock")], rounds=2), strict=True
    )
    junos = parse_snmprec(CAPTURES / "junos_rpm.snmprec")

    for polls, count in ((junos_polls, 59), (ciena_polls, 75)):
        assert all(poll.ok and len(poll.records) == count for poll in polls)
        assert {r.sys_uptime_ticks for poll in polls for r in poll.records} == {None}
        assert all(record_errors(r, now=NOW) == [] for r in polls[0].records)
        assert polls[0].uptime_source is None
        assert len([w for w in polls[0].warnings if "restart detection is limited" in w]) == 1
        assert not [w for w in polls[1].warnings if "restart detection" in w]  # once per device, not per poll
    # Junos still signals counter discontinuities per interface; the Ciena has nothing at all
    (junos_restart,) = [w for w in junos_polls[0].warnings if "restart" in w]
    assert junos_restart.endswith("restarts are detected from ifCounterDiscontinuityTime (59 of 59 interfaces)")
    (ciena_restart,) = [w for w in ciena_polls[0].warnings if "restart" in w]
    assert "never a wrap" in ciena_restart
    ge7 = next(r for r in junos_polls[0].records if r.interface == "ge-0/0/7")
    assert ge7.counters.hc_in_octets == 5823315416420
    assert ge7.counter_discontinuity_ticks == column(junos, "1.3.6.1.2.1.31.1.1.1.19")[ge7.if_index]


def test_the_junos_mtu_values_are_one_warning_on_the_first_poll_then_none(sim):
    rounds = poll_all([device(sim, "junos_rpm")], rounds=3)

    assert [polls[0].warnings for polls in rounds] == [(JUNOS_MTU_WARNING,), (), ()]
    assert [polls[0].repeated for polls in rounds] == [(), (JUNOS_MTU_WARNING,), (JUNOS_MTU_WARNING,)]
    assert all(len(polls[0].records) == 59 for polls in rounds)
    # the other five devices give no warning at all
    (others,) = poll_all([device(sim, name) for name in DEVICES if name != "junos_rpm"])
    assert {poll.equipment: poll.warnings for poll in others} == {
        name.replace("_", "-"): () for name in DEVICES if name != "junos_rpm"
    }


def test_interfaces_sharing_a_name_are_both_reported_with_their_ifindex(sim):
    arista = parse_snmprec(CAPTURES / "arista_eos.snmprec")

    only_one = device(sim, "arista-shared-name", equipment="only-one", interfaces=["Ethernet1#2"])
    (polls,) = poll_all([device(sim, "arista-shared-name"), only_one])

    names = [r.interface for r in polls[0].records]
    assert len(names) == 55 and names[:3] == ["Ethernet1#1", "Ethernet1#2", "Ethernet3"]
    by_name = {r.interface: r for r in polls[0].records}
    assert by_name["Ethernet1#2"].if_index == 2
    assert by_name["Ethernet1#2"].counters.hc_in_octets == column(arista, COUNTER_COLUMNS["hc_in_octets"])[2]
    assert polls[0].warnings == (
        "interface names shared by several ifIndex values, each suffixed with #ifIndex ('Ethernet1')",
    )
    assert [r.interface for r in polls[1].records] == ["Ethernet1#2"]


def test_selection_by_iftype_walks_the_iftype_column_of_the_capture(sim):
    timos = parse_snmprec(CAPTURES / "timos.snmprec")
    lags = {index for index, if_type in column(timos, IF_TYPE).items() if if_type == 161}

    (polls,) = poll_all([device(sim, "timos", if_types=[161])])

    assert {r.if_index for r in polls[0].records} == lags and len(lags) == 3
