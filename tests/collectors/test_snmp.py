"""Unit tests of the SNMP collector: pure record building, config, and polling through a fake transport.

No network and no pysnmp here (tests/collectors/test_snmp_sim.py polls a real simulated agent).
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import msgspec
import pytest

from collectors import snmp
from collectors.counters import rate_between, sample_from_snmp
from collectors.records import decode_records, record_errors, record_to_dict
from collectors.snmp import (
    ALL_COLUMNS,
    ERROR_AUTH,
    ERROR_DEADLINE,
    ERROR_INTERNAL,
    ERROR_NO_DATA,
    ERROR_RESOLVE,
    ERROR_RESPONSE,
    ERROR_TIMEOUT,
    FALLBACK_COLUMNS,
    IF_ADMIN_STATUS,
    IF_ALIAS,
    IF_COUNTER_DISCONTINUITY_TIME,
    IF_DESCR,
    IF_HC_IN_OCTETS,
    IF_HC_IN_UCAST_PKTS,
    IF_HC_OUT_OCTETS,
    IF_HC_OUT_UCAST_PKTS,
    IF_HIGH_SPEED,
    IF_IN_DISCARDS,
    IF_IN_ERRORS,
    IF_IN_OCTETS,
    IF_MTU,
    IF_NAME,
    IF_OPER_STATUS,
    IF_OUT_DISCARDS,
    IF_OUT_ERRORS,
    IF_OUT_OCTETS,
    IF_SPEED,
    IF_TYPE,
    PRIMARY_COLUMNS,
    SNMP_ENGINE_BOOTS,
    SYS_UPTIME,
    FakeSnmpTransport,
    SnmpDeviceConfig,
    SnmpError,
    SnmpPoller,
    SnmpTransport,
    build_records,
    fallback_columns,
    index_column,
    poll_with_transport,
    pysnmp_transport,
    read_device,
)
from collectors.snmp import core as snmp_core

NOW = datetime(2026, 3, 1, 11, 1, tzinfo=UTC)
ABOVE_2_63 = 18446744073000000000  # docs/scenario-format.md's example: above 2^63, below 2^64
COUNTER64_MAX = 2**64 - 1
COUNTER32_MAX = 2**32 - 1


def router_walks() -> dict[str, dict[int, object]]:
    """Two interfaces of a modern router: ifXTable with HC counters (and the 32-bit ones too)."""
    return {
        IF_NAME: {1: b"xe-0/0/0", 2: b"xe-0/0/1"},
        IF_DESCR: {1: b"Juniper xe-0/0/0", 2: b"Juniper xe-0/0/1"},
        IF_ALIAS: {1: b"CERN-FZK primary", 2: b""},
        IF_HIGH_SPEED: {1: 10000, 2: 100000},
        IF_MTU: {1: 9192, 2: 1500},
        IF_ADMIN_STATUS: {1: 1, 2: 1},
        IF_OPER_STATUS: {1: 1, 2: 2},
        IF_HC_IN_OCTETS: {1: ABOVE_2_63, 2: COUNTER64_MAX},
        IF_HC_OUT_OCTETS: {1: 2**63, 2: 0},
        IF_HC_IN_UCAST_PKTS: {1: 123456789012, 2: 2**63 - 1},
        IF_HC_OUT_UCAST_PKTS: {1: 98765432109, 2: 5},
        IF_IN_ERRORS: {1: 3, 2: COUNTER32_MAX},
        IF_OUT_ERRORS: {1: 0, 2: 1},
        IF_IN_DISCARDS: {1: 7, 2: 0},
        IF_OUT_DISCARDS: {1: 1, 2: 0},
        IF_COUNTER_DISCONTINUITY_TIME: {1: 0, 2: 12345},
        IF_IN_OCTETS: {1: 4000000000, 2: 1},
        IF_OUT_OCTETS: {1: 12345, 2: 2},
    }


def legacy_walks() -> dict[str, dict[int, object]]:
    """An old switch: ifTable only (no ifName, no HC counters, no ifHighSpeed)."""
    return {
        IF_DESCR: {1: b"eth0", 2: b"Serial0/0"},
        IF_MTU: {1: 1500, 2: 4470},
        IF_SPEED: {1: 100_000_000, 2: 2_048_000},
        IF_ADMIN_STATUS: {1: 1, 2: 1},
        IF_OPER_STATUS: {1: 1, 2: 7},
        IF_IN_OCTETS: {1: COUNTER32_MAX, 2: 1000},
        IF_OUT_OCTETS: {1: 17, 2: 2000},
        IF_IN_ERRORS: {1: 5, 2: 0},
        IF_OUT_ERRORS: {1: 0, 2: COUNTER32_MAX},
        IF_IN_DISCARDS: {1: 2, 2: 0},
        IF_OUT_DISCARDS: {1: 0, 2: 3},
    }


SCALARS = {SYS_UPTIME: 883412200, SNMP_ENGINE_BOOTS: 7}


def by_name(records):
    return {r.interface: r for r in records}


# --- build_records -----------------------------------------------------------------------------


def test_counter64_values_above_2_63_are_preserved_exactly():
    records = by_name(build_records("geant-par", router_walks(), SCALARS, NOW, host="192.0.2.1"))

    xe0 = records["xe-0/0/0"]
    assert xe0.counters.hc_in_octets == 18446744073000000000
    assert xe0.counters.hc_out_octets == 9223372036854775808
    assert records["xe-0/0/1"].counters.hc_in_octets == 18446744073709551615
    assert records["xe-0/0/1"].counters.hc_in_ucast_pkts == 9223372036854775807
    # ... and survive the wire: JSON encode, then the ingest's own validation and decoding.
    wire = msgspec.json.encode([record_to_dict(r) for r in records.values()])
    assert b"18446744073000000000" in wire and b"18446744073709551615" in wire
    decoded = by_name(decode_records(wire))
    assert decoded["xe-0/0/0"].counters.hc_in_octets == 18446744073000000000
    assert decoded["xe-0/0/1"].counters.hc_in_octets == 18446744073709551615
    assert decoded == records


def test_router_record_carries_every_field_of_the_snmp_record():
    xe0 = by_name(build_records("geant-par", router_walks(), SCALARS, NOW, host="192.0.2.1"))["xe-0/0/0"]

    assert record_to_dict(xe0) == {
        "type": "snmp",
        "time": "2026-03-01T11:01:00Z",
        "equipment": "geant-par",
        "interface": "xe-0/0/0",
        "counters": {
            "hc_in_octets": 18446744073000000000,
            "hc_out_octets": 9223372036854775808,
            "hc_in_ucast_pkts": 123456789012,
            "hc_out_ucast_pkts": 98765432109,
            "in_errors": 3,
            "out_errors": 0,
            "in_discards": 7,
            "out_discards": 1,
        },
        "if_index": 1,
        "host": "192.0.2.1",
        "sys_uptime_ticks": 883412200,
        "snmp_engine_boots": 7,
        "counter_discontinuity_ticks": 0,
        "oper_status": "up",
        "admin_status": "up",
        "speed_mbps": 10000.0,
    }
    assert record_errors(xe0, now=NOW) == []


def test_hc_counters_win_and_the_32_bit_octets_are_not_sent_alongside():
    records = by_name(build_records("r", router_walks(), SCALARS, NOW))

    for record in records.values():
        assert record.counters.in_octets is None
        assert record.counters.out_octets is None
    assert records["xe-0/0/1"].oper_status == "down"
    assert records["xe-0/0/1"].counter_discontinuity_ticks == 12345
    assert records["xe-0/0/1"].speed_mbps == 100000.0


def test_without_hc_counters_the_32_bit_octets_ifdescr_and_ifspeed_are_used():
    records = by_name(build_records("old-switch", legacy_walks(), {SYS_UPTIME: 4294967000}, NOW))

    assert sorted(records) == ["Serial0/0", "eth0"]
    eth0 = records["eth0"]
    assert eth0.counters.in_octets == 4294967295
    assert eth0.counters.out_octets == 17
    assert eth0.counters.hc_in_octets is None and eth0.counters.hc_in_ucast_pkts is None
    assert eth0.speed_mbps == 100.0
    assert records["Serial0/0"].speed_mbps == 2.048
    assert records["Serial0/0"].oper_status == "lowerLayerDown"
    assert records["Serial0/0"].counters.out_errors == 4294967295
    assert eth0.snmp_engine_boots is None  # v2c agents without SNMP-FRAMEWORK-MIB
    assert eth0.counter_discontinuity_ticks is None
    assert all(record_errors(r, now=NOW) == [] for r in records.values())


def test_mixed_device_falls_back_per_interface():
    walks = router_walks()
    del walks[IF_HC_IN_OCTETS][2]  # a virtual interface without HC octets
    del walks[IF_HC_OUT_OCTETS][2]

    records = by_name(build_records("r", walks, SCALARS, NOW))

    assert records["xe-0/0/0"].counters.hc_in_octets == ABOVE_2_63
    assert records["xe-0/0/0"].counters.in_octets is None
    assert records["xe-0/0/1"].counters.hc_in_octets is None
    assert (records["xe-0/0/1"].counters.in_octets, records["xe-0/0/1"].counters.out_octets) == (1, 2)
    assert records["xe-0/0/1"].counters.hc_in_ucast_pkts == 2**63 - 1  # other HC columns still used


def test_missing_columns_give_none_not_zero():
    walks = {IF_NAME: {5: b"ge-0/0/5"}, IF_OPER_STATUS: {5: 1}, IF_HC_IN_OCTETS: {5: 42}}

    (record,) = build_records("r", walks, {SYS_UPTIME: 100}, NOW)

    assert record.interface == "ge-0/0/5" and record.if_index == 5
    assert msgspec.structs.asdict(record.counters) == {
        "hc_in_octets": 42,
        "hc_out_octets": None,
        "hc_in_ucast_pkts": None,
        "hc_out_ucast_pkts": None,
        "in_octets": None,
        "out_octets": None,
        "in_errors": None,
        "out_errors": None,
        "in_discards": None,
        "out_discards": None,
    }
    assert (record.speed_mbps, record.admin_status, record.snmp_engine_boots) == (None, None, None)
    assert record.counter_discontinuity_ticks is None
    assert record_errors(record, now=NOW) == []


def test_interface_without_any_name_is_named_by_ifindex_and_without_status_is_unknown():
    reading = read_device({IF_HC_IN_OCTETS: {9: 1}}, {SYS_UPTIME: 1})

    (row,) = reading.interfaces
    assert (row.name, row.oper_status) == ("ifIndex.9", None)
    assert reading.warnings == ("ifOperStatus: absent, reported as 'unknown' (ifIndex.9)",)
    (record,) = build_records("r", {IF_HC_IN_OCTETS: {9: 1}}, {SYS_UPTIME: 1}, NOW)
    assert record.oper_status == "unknown"  # required by the wire schema; IF-MIB's own "unknown"


def test_names_are_cleaned_for_the_wire_schema():
    walks = {
        IF_NAME: {1: b"Gi0/1\x00", 2: b"  ", 3: "x" * 200, 4: b"caf\xc3\xa9 port"},
        IF_DESCR: {2: b"GigabitEthernet0/2"},
        IF_OPER_STATUS: {1: 1, 2: 1, 3: 1, 4: 1},
    }

    records = build_records("r", walks, {SYS_UPTIME: 1}, NOW)

    assert [r.interface for r in records] == ["Gi0/1", "GigabitEthernet0/2", "x" * 128, "café port"]
    assert all(record_errors(r, now=NOW) == [] for r in records)


def test_out_of_range_values_are_dropped_with_a_warning():
    walks = {
        IF_NAME: {1: b"xe-0/0/0"},
        IF_OPER_STATUS: {1: 9},  # not an IF-MIB status
        IF_IN_ERRORS: {1: 2**32},  # a Counter32 cannot hold this
        IF_HC_IN_OCTETS: {1: 2**64},
        IF_HC_OUT_OCTETS: {1: -1},
        IF_OUT_ERRORS: {1: b"12"},
        IF_HIGH_SPEED: {1: 10000},
    }

    reading = read_device(walks, {SYS_UPTIME: 2**32})

    (row,) = reading.interfaces
    assert row.counters == {}
    assert row.oper_status is None
    assert reading.sys_uptime_ticks is None
    # one per kind: 4 counters, ifOperStatus, sysUpTime, and what its absence means for restart detection
    assert [w.kind for w in reading.notices] == [
        "sysUpTime.0: not a number within 0..4294967295, left out",
        "hc_in_octets: not a number within 0..18446744073709551615, left out",
        "hc_out_octets: not a number within 0..18446744073709551615, left out",
        "in_errors: not a number within 0..4294967295, left out",
        "out_errors: not a number within 0..4294967295, left out",
        "ifOperStatus: not a known status, left out",
        "restart detection",
    ]
    (record,) = build_records("r", walks, {SYS_UPTIME: 2**32}, NOW)
    assert record.sys_uptime_ticks is None and record.counters.hc_in_octets is None


def test_values_of_one_kind_make_one_warning_per_poll():
    # A Junos SRX240: 16 internal interfaces report ifMtu 2147483647 (junos_rpm.snmprec)
    walks = {IF_NAME: {i: f"pp{i}".encode() for i in range(1, 17)}, IF_MTU: dict.fromkeys(range(1, 17), 2**31 - 1)}
    walks[IF_OPER_STATUS] = dict.fromkeys(range(1, 17), 1)

    reading = read_device(walks, SCALARS)

    assert len(reading.interfaces) == 16 and {row.mtu_bytes for row in reading.interfaces} == {None}
    assert reading.warnings == (
        "ifMtu: not a number within 0..65536, left out (ifIndex 1 2147483647, ifIndex 2 2147483647, "
        "ifIndex 3 2147483647, ifIndex 4 2147483647, ifIndex 5 2147483647 and 11 more)",
    )


def test_without_sysuptime_snmp_engine_time_gives_the_uptime():
    # 26373899 s of engine time (arista_eos.snmprec) is 2637389900 ticks; beyond 2^32 ticks it wraps like sysUpTime
    for engine_time_s, ticks in ((26373899, 2637389900), (49692820, 4969282000 - 2**32)):
        reading = read_device(router_walks(), {snmp.SNMP_ENGINE_TIME: engine_time_s})

        assert (reading.sys_uptime_ticks, reading.uptime_source) == (ticks, "snmpEngineTime.0")
        (notice,) = reading.notices
        assert notice.kind == "restart detection"
        assert notice.message.startswith("no sysUpTime.0 in this device's view: restart detection is limited")
        assert notice.message.endswith(
            "restarts are detected from snmpEngineTime.0, ifCounterDiscontinuityTime (2 of 2 interfaces) "
            "(sent as sys_uptime_ticks, 1 s resolution)"
        )


def test_sysuptime_wins_over_snmp_engine_time():
    reading = read_device(router_walks(), {SYS_UPTIME: 5, snmp.SNMP_ENGINE_TIME: 26373899})

    assert (reading.sys_uptime_ticks, reading.uptime_source, reading.notices) == (5, "sysUpTime.0", ())


def test_without_any_uptime_the_records_keep_their_counters_and_say_restart_detection_is_limited():
    walks = router_walks()
    del walks[IF_COUNTER_DISCONTINUITY_TIME]

    reading = read_device(walks, {})
    records = build_records("r", walks, {}, NOW)

    assert reading.sys_uptime_ticks is None and reading.uptime_source is None
    assert [r.counters.hc_in_octets for r in records] == [ABOVE_2_63, COUNTER64_MAX]
    assert {(r.sys_uptime_ticks, r.snmp_engine_boots, r.counter_discontinuity_ticks) for r in records} == {
        (None, None, None)
    }
    assert "sys_uptime_ticks" not in record_to_dict(records[0])
    assert all(record_errors(r, now=NOW) == [] for r in records)
    (warning,) = reading.warnings
    assert "restart detection is limited" in warning and "never a wrap" in warning
    # with the engine boots or a discontinuity time the centre still has a detector, and the warning says which
    (warning,) = read_device(router_walks(), {SNMP_ENGINE_BOOTS: 3}).warnings
    assert warning.endswith(
        "restarts are detected from snmpEngineBoots.0, ifCounterDiscontinuityTime (2 of 2 interfaces)"
    )


def test_oper_and_admin_status_labels():
    walks = {IF_OPER_STATUS: {i: i for i in range(1, 8)}, IF_ADMIN_STATUS: {1: 1, 2: 2, 3: 3}}

    records = build_records("r", walks, {SYS_UPTIME: 1}, NOW)

    assert [r.oper_status for r in records] == [
        "up",
        "down",
        "testing",
        "unknown",
        "dormant",
        "notPresent",
        "lowerLayerDown",
    ]
    assert [r.admin_status for r in records] == ["up", "down", "testing", None, None, None, None]


def test_speed_from_ifhighspeed_else_ifspeed_and_saturated_ifspeed_is_unknown():
    walks = {
        IF_OPER_STATUS: {1: 1, 2: 1, 3: 1, 4: 1},
        IF_HIGH_SPEED: {1: 0, 2: 400000},
        IF_SPEED: {1: 10_000_000, 2: 2**32 - 1, 3: 2**32 - 1, 4: 1_000_000_000},
    }

    records = build_records("r", walks, {SYS_UPTIME: 1}, NOW)

    # 0 = unknown (counters.sample_from_snmp treats it so); a saturated ifSpeed is not 4.29 Gb/s.
    assert [r.speed_mbps for r in records] == [0.0, 400000.0, None, 1000.0]


def test_interface_filter_selects_by_name_and_reports_unknown_names():
    reading = read_device(router_walks(), SCALARS, interface_filter=["xe-0/0/1", "xe-9/9/9"])

    assert [row.name for row in reading.interfaces] == ["xe-0/0/1"]
    assert reading.interfaces_seen == 2
    assert reading.warnings == ("interface 'xe-9/9/9' not found on the device (ifName, ifDescr)",)


def test_if_index_names_rename_and_select():
    reading = read_device(router_walks(), SCALARS, interface_filter=[], if_index_names={2: "cern-fzk-10g", 40: "gone"})

    (row,) = reading.interfaces
    assert (row.if_index, row.name, row.if_name) == (2, "cern-fzk-10g", "xe-0/0/1")
    assert reading.warnings == ("ifIndex 40 ('gone') not found on the device",)


def test_if_index_names_without_a_filter_rename_and_keep_every_interface():
    reading = read_device(router_walks(), SCALARS, if_index_names={1: "cern-fzk-10g"})

    assert [(row.if_index, row.name) for row in reading.interfaces] == [(1, "cern-fzk-10g"), (2, "xe-0/0/1")]
    assert reading.warnings == ()


def test_shared_names_get_their_ifindex_appended_and_are_all_reported():
    walks = {
        IF_NAME: {3: b"Vlan10", 7: b"Vlan10", 8: b"Vlan20", 9: b"y" * 130, 10: b"y" * 128 + b"z"},
        IF_OPER_STATUS: dict.fromkeys((3, 7, 8, 9, 10), 1),
        IF_HC_IN_OCTETS: {3: 30, 7: 70, 8: 80, 9: 90, 10: 100},
    }

    reading = read_device(walks, {SYS_UPTIME: 1})

    assert [(row.if_index, row.name) for row in reading.interfaces] == [
        (3, "Vlan10#3"),
        (7, "Vlan10#7"),
        (8, "Vlan20"),
        (9, "y" * 126 + "#9"),  # equal once cut to 128 characters
        (10, "y" * 125 + "#10"),
    ]
    assert reading.warnings == (
        "interface names shared by several ifIndex values, each suffixed with #ifIndex ('Vlan10', '" + "y" * 128 + "')",
    )
    records = build_records("r", walks, {SYS_UPTIME: 1}, NOW)
    assert [(r.interface, r.counters.hc_in_octets) for r in records][:2] == [("Vlan10#3", 30), ("Vlan10#7", 70)]
    assert all(record_errors(r, now=NOW) == [] for r in records)  # within the wire schema's 128 characters


def test_shared_names_are_stable_whatever_the_selection_and_a_name_given_by_ifindex_is_kept():
    walks = {IF_NAME: {3: b"Vlan10", 7: b"Vlan10"}, IF_OPER_STATUS: {3: 1, 7: 1}}

    only_7 = read_device(walks, SCALARS, interface_filter=["Vlan10#7"])
    both = read_device(walks, SCALARS, interface_filter=["Vlan10"])
    renamed = read_device(walks, SCALARS, if_index_names={3: "Vlan10"})

    assert [row.name for row in only_7.interfaces] == ["Vlan10#7"]
    assert [row.name for row in both.interfaces] == ["Vlan10#3", "Vlan10#7"]
    assert [row.name for row in renamed.interfaces] == ["Vlan10", "Vlan10#7"]


def test_a_suffixed_name_that_is_another_interfaces_real_name_leaves_that_one_out():
    walks = {IF_NAME: {3: b"Vlan10", 7: b"Vlan10", 9: b"Vlan10#7"}, IF_OPER_STATUS: {3: 1, 7: 1, 9: 1}}

    reading = read_device(walks, SCALARS)

    assert [(row.if_index, row.name) for row in reading.interfaces] == [(3, "Vlan10#3"), (7, "Vlan10#7")]
    assert "ifIndex 9 left out" in reading.warnings[-1]


def test_interface_reading_keeps_alias_and_mtu_which_the_record_has_no_field_for():
    reading = read_device(router_walks(), SCALARS)

    assert [(r.alias, r.mtu_bytes) for r in reading.interfaces] == [("CERN-FZK primary", 9192), (None, 1500)]


def test_naive_time_is_refused():
    with pytest.raises(ValueError, match="timezone-aware"):
        build_records("r", router_walks(), SCALARS, datetime(2026, 3, 1, 11, 1))


def test_time_is_converted_to_utc():
    cet = datetime(2026, 3, 1, 12, 1, tzinfo=timezone(timedelta(hours=1)))

    records = build_records("r", router_walks(), SCALARS, cet)

    assert {r.time for r in records} == {NOW}


def test_index_column_keeps_only_rows_of_that_column():
    rows = {
        f"{IF_HC_IN_OCTETS}.1": 5,
        f"{IF_HC_IN_OCTETS}.17": ABOVE_2_63,
        f"{IF_HC_IN_OCTETS}.1.2": 9,  # not a single ifIndex
        f"{IF_HC_IN_OCTETS}0.3": 9,  # another column sharing the text prefix (...1.1.6 vs ...1.1.60)
    }

    assert index_column(IF_HC_IN_OCTETS, rows) == {1: 5, 17: ABOVE_2_63}


def test_fallback_columns_only_for_what_selected_interfaces_lack():
    assert fallback_columns(read_device(router_walks(), SCALARS)) == ()
    first_round = {column: rows for column, rows in legacy_walks().items() if column in PRIMARY_COLUMNS}
    assert fallback_columns(read_device(first_round, SCALARS)) == (IF_IN_OCTETS, IF_OUT_OCTETS, IF_SPEED)
    assert fallback_columns(read_device(legacy_walks(), SCALARS)) == ()  # the second round found them
    walks = router_walks()
    del walks[IF_HC_OUT_OCTETS][2]
    del walks[IF_OUT_OCTETS]
    assert fallback_columns(read_device(walks, SCALARS)) == (IF_OUT_OCTETS,)
    assert fallback_columns(read_device(walks, SCALARS, interface_filter=["xe-0/0/0"])) == ()


# --- configuration -----------------------------------------------------------------------------


def test_config_from_toml_table():
    config = SnmpDeviceConfig.from_mapping(
        {
            "equipment": "ral-border",
            "host": "192.0.2.1",
            "port": 161,
            "version": "3",
            "user": "wanmon",
            "auth_protocol": "sha256",
            "auth_key": "auth-secret-1",
            "priv_protocol": "aes256",
            "priv_key": "priv-secret-1",
            "interval_s": 60,
            "interfaces": ["xe-0/0/0"],
            "if_index_names": {"17": "ae0"},
        }
    )

    assert config.auth_protocol == "SHA256" and config.priv_protocol == "AES256"
    assert config.security_level == "authPriv"
    assert config.interfaces == ("xe-0/0/0",)
    assert config.if_index_names == {17: "ae0"}
    assert config.effective_deadline_s == 20.0  # max(20, 4 x 2 s x 2 tries)
    assert "secret" not in repr(config)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"community": None}, 'community: required with version "2c"'),
        ({"version": "1"}, "version: must be one of"),
        ({"version": "3", "user": None}, 'user: required with version "3"'),
        ({"version": "3", "user": "u", "auth_key": "short"}, "at least 8 characters"),
        ({"version": "3", "user": "u", "priv_key": "priv-secret-1"}, "priv_key: privacy .* needs authentication"),
        ({"version": "3", "user": "u", "auth_key": "auth-secret-1", "auth_protocol": "SHA3"}, "auth_protocol"),
        ({"timeout_s": 2, "retries": 2, "deadline_s": 5}, "shorter than one request"),
        ({"port": 0}, "not a UDP port"),
        ({"interfaces": "xe-0/0/0"}, "list of names"),
        ({"equipment": "geant:par"}, "not an inventory equipment name"),
        ({"host": ""}, "not a host name"),
    ],
)
def test_config_problems_are_refused(options, message):
    base = {"equipment": "r", "host": "192.0.2.1", "community": "public"}
    with pytest.raises(ValueError, match=message):
        SnmpDeviceConfig(**{**base, **options})


def test_config_unknown_key_is_refused():
    with pytest.raises(ValueError, match="unknown snmp option"):
        SnmpDeviceConfig.from_mapping({"equipment": "r", "host": "h", "community": "c", "comunity": "x"})


def test_default_deadline_grows_with_slow_timeouts():
    config = SnmpDeviceConfig(equipment="r", host="h", community="c", timeout_s=5, retries=3)

    assert config.effective_deadline_s == 80.0  # 4 x 5 s x 4 tries


# --- polling through a fake transport ----------------------------------------------------------


class FakeTransport(FakeSnmpTransport):
    """The in-memory device, by default the router of :func:`router_walks` with :data:`SCALARS`."""

    def __init__(self, walks=None, scalars=None, **options):
        super().__init__(
            router_walks() if walks is None else walks, dict(SCALARS) if scalars is None else scalars, **options
        )


def config(**options):
    return SnmpDeviceConfig(**{"equipment": "geant-par", "host": "192.0.2.1", "community": "public", **options})


def test_fake_transport_satisfies_the_protocol():
    assert isinstance(FakeTransport(), SnmpTransport)


def test_poll_walks_primary_columns_only_when_hc_counters_exist():
    transport = FakeTransport()

    poll = asyncio.run(poll_with_transport(transport, config(), now=NOW))

    assert poll.ok and poll.error is None and poll.warnings == ()
    assert sorted(transport.walked) == sorted(PRIMARY_COLUMNS)
    expected = build_records("geant-par", router_walks(), SCALARS, poll.time, host="192.0.2.1")
    assert by_name(poll.records) == by_name(expected)
    # the records' time is when the uptime was answered: `now` plus the time that first request took
    assert NOW <= poll.time < NOW + timedelta(seconds=1)
    assert {r.time for r in poll.records} == {poll.time}


def test_poll_walks_fallback_columns_for_a_device_without_hc_counters():
    transport = FakeTransport(legacy_walks(), {SYS_UPTIME: 5})

    poll = asyncio.run(poll_with_transport(transport, config(), now=NOW))

    assert sorted(transport.walked) == sorted(ALL_COLUMNS)
    assert set(transport.walked[len(PRIMARY_COLUMNS) :]) == set(FALLBACK_COLUMNS)
    assert by_name(poll.records)["eth0"].counters.in_octets == 4294967295
    assert by_name(poll.records)["eth0"].speed_mbps == 100.0


def test_poll_limits_parallel_walks_per_device():
    transport = FakeTransport(delay_s=0.01)

    asyncio.run(poll_with_transport(transport, config(max_parallel_requests=3), now=NOW))

    assert transport.max_in_flight == 3


def test_poll_without_now_stamps_the_current_utc_time():
    before = datetime.now(UTC)
    poll = asyncio.run(poll_with_transport(FakeTransport(), config()))
    assert before <= poll.records[0].time <= datetime.now(UTC)


def test_a_timeout_fails_the_device_with_no_records():
    transport = FakeTransport(fail={"get": SnmpError(ERROR_TIMEOUT, "no response")})

    poll = asyncio.run(poll_with_transport(transport, config(), now=NOW))

    assert not poll.ok and poll.records == ()
    assert poll.error.kind == ERROR_TIMEOUT
    assert transport.walked == []  # the reachability probe failed: no burst of walks
    assert str(poll.error).startswith("SNMP poll of geant-par (192.0.2.1:161) failed after")
    assert poll.error.as_dict()["kind"] == "timeout"


def test_a_failing_walk_cancels_the_others_and_fails_the_device():
    transport = FakeTransport(
        fail={IF_HC_IN_OCTETS: SnmpError(ERROR_AUTH, "Wrong SNMP PDU digest")}, hang_columns=[IF_MTU]
    )

    started = time.monotonic()
    poll = asyncio.run(poll_with_transport(transport, config(), now=NOW))

    assert poll.error.kind == ERROR_AUTH and "digest" in poll.error.message
    assert time.monotonic() - started < 5  # the hanging walk was cancelled, not awaited


def test_an_error_status_on_one_column_leaves_that_column_out():
    transport = FakeTransport(
        fail={IF_COUNTER_DISCONTINUITY_TIME: SnmpError(ERROR_RESPONSE, "agent answered genErr for ...")}
    )

    poll = asyncio.run(poll_with_transport(transport, config(), now=NOW))

    assert poll.ok and len(poll.records) == 2
    assert all(r.counter_discontinuity_ticks is None for r in poll.records)
    assert poll.warnings == (f"column {IF_COUNTER_DISCONTINUITY_TIME} left out: agent answered genErr for ...",)


def test_the_per_device_deadline_bounds_a_slow_device():
    transport = FakeTransport(hang_columns=[IF_HC_OUT_OCTETS])

    poll = asyncio.run(poll_with_transport(transport, config(timeout_s=0.1, retries=0, deadline_s=0.3), now=NOW))

    assert poll.error.kind == ERROR_DEADLINE
    assert 0.29 <= poll.elapsed_s < 1.0
    assert "deadline of 0.3 s" in poll.error.message


def test_a_device_without_interfaces_is_an_error():
    poll = asyncio.run(poll_with_transport(FakeTransport(walks={}), config(), now=NOW))

    assert poll.error.kind == ERROR_NO_DATA and "IF-MIB" in poll.error.message


def test_an_unexpected_exception_is_reported_not_raised():
    transport = FakeTransport(fail={IF_NAME: KeyError("boom")})

    poll = asyncio.run(poll_with_transport(transport, config(), now=NOW))

    assert poll.error.kind == ERROR_INTERNAL and "KeyError" in poll.error.message


def test_poll_devices_runs_devices_concurrently_and_keeps_their_order():
    transports = {
        "slow": FakeTransport(hang_columns=[IF_NAME]),
        "fast": FakeTransport(delay_s=0.01),
        "legacy": FakeTransport(legacy_walks(), {SYS_UPTIME: 1}, delay_s=0.01),
    }

    async def factory(cfg):
        if cfg.equipment == "unresolvable":
            raise SnmpError(ERROR_RESOLVE, "cannot resolve")
        return transports[cfg.equipment]

    configs = [
        config(equipment="slow", timeout_s=0.2, retries=0, deadline_s=0.5),
        config(equipment="fast"),
        config(equipment="unresolvable"),
        config(equipment="legacy"),
    ]

    async def run():
        async with SnmpPoller(transport_factory=factory) as poller:
            return await poller.poll_devices(configs, now=NOW)

    started = time.monotonic()
    polls = asyncio.run(run())
    elapsed = time.monotonic() - started

    assert [p.equipment for p in polls] == ["slow", "fast", "unresolvable", "legacy"]
    assert [p.error.kind if p.error else None for p in polls] == [ERROR_DEADLINE, None, ERROR_RESOLVE, None]
    assert polls[1].elapsed_s < 0.3  # not delayed by the slow device
    assert elapsed < 1.5
    assert len(polls[1].records) == 2 and len(polls[3].records) == 2


def test_poll_devices_limits_concurrent_devices():
    active = {"now": 0, "max": 0}

    class Counting(FakeTransport):
        async def get(self, oids):
            active["now"] += 1
            active["max"] = max(active["max"], active["now"])
            try:
                await asyncio.sleep(0.02)
                return await super().get(oids)
            finally:
                active["now"] -= 1

    async def factory(cfg):
        return Counting()

    async def run():
        async with SnmpPoller(transport_factory=factory, max_concurrent_devices=2) as poller:
            return await poller.poll_devices([config(equipment=f"r{i}") for i in range(6)], now=NOW)

    polls = asyncio.run(run())
    assert all(p.ok for p in polls) and active["max"] == 2


def test_a_poller_belongs_to_one_event_loop():
    async def factory(cfg):
        return FakeTransport()

    poller = SnmpPoller(transport_factory=factory)
    asyncio.run(poller.poll_device(config(), now=NOW))

    with pytest.raises(RuntimeError, match="event loop"):
        asyncio.run(poller.poll_device(config(), now=NOW))
    poller.close()
    with pytest.raises(RuntimeError, match="closed"):
        asyncio.run(poller.poll_device(config(), now=NOW))


# --- the pysnmp transport, with pysnmp replaced ------------------------------------------------


class _Timeout:
    """Stands in for pysnmp.proto.errind.RequestTimedOut (matched by class name)."""

    def __bool__(self):
        return True

    def __str__(self):
        return "No SNMP response received before timeout"


_Timeout.__name__ = "RequestTimedOut"


def test_bulk_walk_stops_at_the_first_timeout_instead_of_retrying_forever(monkeypatch):
    calls = {"yields": 0, "closed": False}

    async def fake_bulk_walk_cmd(*args, **options):
        assert options == {"lookupMib": False, "lexicographicMode": False}
        try:
            while True:  # what pysnmp 7.1 does after a timeout: yield it, then send the request again
                calls["yields"] += 1
                yield _Timeout(), 0, 0, ()
        finally:
            calls["closed"] = True

    class FakeHlapi:
        bulk_walk_cmd = staticmethod(fake_bulk_walk_cmd)

        @staticmethod
        def ContextData(**kwargs):  # noqa: N802 - pysnmp's name
            return kwargs

        @staticmethod
        def CommunityData(*args, **kwargs):  # noqa: N802
            return args

        @staticmethod
        def ObjectType(value):  # noqa: N802
            return value

        @staticmethod
        def ObjectIdentity(value):  # noqa: N802
            return value

    monkeypatch.setattr(pysnmp_transport, "_hlapi", lambda: FakeHlapi)
    transport = pysnmp_transport._PysnmpTransport(object(), config(timeout_s=1, retries=1), object())

    with pytest.raises(SnmpError) as excinfo:
        asyncio.run(transport.bulk_walk(IF_HC_IN_OCTETS))

    assert excinfo.value.kind == ERROR_TIMEOUT
    assert "within 1 s x 2 tries" in excinfo.value.message and "wrong community" in excinfo.value.message
    assert calls == {"yields": 1, "closed": True}


def test_importing_the_collector_loads_neither_pysnmp_nor_the_central_stack():
    code = textwrap.dedent(
        """\
        import sys
        import collectors.snmp
        bad = sorted({m.split('.')[0] for m in sys.modules} & {'django', 'wanmon', 'celery', 'pysnmp'})
        print(','.join(bad))
        """
    )
    repo = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""


# --- the uptime and the records' time ----------------------------------------------------------


class FakeClock:
    """Stands in for ``time`` in collectors.snmp.core: a monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now_s = 1000.0

    def monotonic(self) -> float:
        return self.now_s


def test_a_slow_first_request_does_not_make_a_false_restart(monkeypatch):
    # The scheduler starts a poll at `now`; the uptime GET is answered 12 s later (a lost datagram
    # retried, slow name resolution). The next poll, 60 s after, is answered at once. The device's
    # uptime advanced 48 s between the two answers: stamped at `now`, the records would say 60 s
    # passed, 12 s more than the uptime (beyond the centre's 10 s + 1 % tolerance): a false restart.
    clock = FakeClock()
    monkeypatch.setattr(snmp_core, "_time", clock)
    boot_s = clock.now_s - 8_834_122.0

    class AnswersAfter(FakeTransport):
        def __init__(self, delay_s: float) -> None:
            super().__init__()
            self.answer_after_s = delay_s

        async def get(self, oids):
            clock.now_s += self.answer_after_s
            self.scalars = {SYS_UPTIME: round((clock.now_s - boot_s) * 100)}
            return await super().get(oids)

    first = asyncio.run(poll_with_transport(AnswersAfter(12.0), config(), now=NOW))
    clock.now_s = 1060.0
    second = asyncio.run(poll_with_transport(AnswersAfter(0.0), config(), now=NOW + timedelta(seconds=60)))

    assert first.time == NOW + timedelta(seconds=12) and second.time == NOW + timedelta(seconds=60)
    prev, cur = (sample_from_snmp(by_name(poll.records)["xe-0/0/0"]) for poll in (first, second))
    assert cur.sys_uptime_ticks - prev.sys_uptime_ticks == 4800
    result = rate_between(prev, cur)
    assert result.discontinuity is None
    assert result.interval_s == 48.0


def test_counter_columns_are_walked_first():
    transport = FakeTransport()

    asyncio.run(poll_with_transport(transport, config(max_parallel_requests=4), now=NOW))

    assert set(transport.walked[:2]) == {IF_HC_IN_OCTETS, IF_HC_OUT_OCTETS}


# --- interface selection -----------------------------------------------------------------------


def selection_walks() -> dict[str, dict[int, object]]:
    """Five interfaces: three Ethernet ports (one admin down), a LAG and a loopback without counters."""
    return {
        IF_NAME: {1: b"xe-0/0/0", 2: b"xe-0/0/1", 3: b"ae0", 4: b"lo0", 5: b"xe-0/0/2"},
        IF_TYPE: {1: 6, 2: 6, 3: 161, 4: 24, 5: 6},
        IF_ADMIN_STATUS: {1: 1, 2: 2, 3: 1, 4: 1, 5: 1},
        IF_OPER_STATUS: {1: 1, 2: 2, 3: 1, 4: 1, 5: 1},
        IF_HC_IN_OCTETS: {1: 10, 2: 20, 3: 30},
        IF_IN_OCTETS: {5: 50},  # 32-bit only: counts as an octet counter
        IF_IN_ERRORS: {4: 0},  # not traffic
    }


@pytest.mark.parametrize(
    ("selection", "names"),
    [
        (snmp.InterfaceSelection(), ["xe-0/0/0", "xe-0/0/1", "ae0", "lo0", "xe-0/0/2"]),
        (snmp.InterfaceSelection(require_octet_counters=True), ["xe-0/0/0", "xe-0/0/1", "ae0", "xe-0/0/2"]),
        (snmp.InterfaceSelection(include=("xe-*",)), ["xe-0/0/0", "xe-0/0/1", "xe-0/0/2"]),
        (snmp.InterfaceSelection(include=("xe-*", "ae*"), exclude=("*/1",)), ["xe-0/0/0", "ae0", "xe-0/0/2"]),
        (snmp.InterfaceSelection(include=("XE-*",)), []),  # case-sensitive, as the device spells names
        (snmp.InterfaceSelection(if_types=(161, 24)), ["ae0", "lo0"]),
        (snmp.InterfaceSelection(admin_status=("up",)), ["xe-0/0/0", "ae0", "lo0", "xe-0/0/2"]),
        (
            snmp.InterfaceSelection(if_types=(6,), admin_status=("up",), require_octet_counters=True),
            ["xe-0/0/0", "xe-0/0/2"],
        ),
        (snmp.InterfaceSelection(require_octet_counters=True, if_index_names={4: "loopback0"}),
         ["xe-0/0/0", "xe-0/0/1", "ae0", "loopback0", "xe-0/0/2"]),  # named by ifIndex: always reported
    ],
)  # fmt: skip
def test_selection_filters(selection, names):
    reading = read_device(selection_walks(), SCALARS, selection=selection)

    assert [row.name for row in reading.interfaces] == names
    assert reading.interfaces_seen == 5


def test_selection_from_config_resolves_iftype_names_and_defaults_to_interfaces_with_octet_counters():
    device = config(if_types=["ethernetCsmacd", "IEEE8023ADLAG", 24, "131"], admin_status=["UP"])

    selection = snmp.InterfaceSelection.from_config(device)

    assert device.if_types == (6, 161, 24, 131)
    assert selection.if_types == (6, 161, 24, 131) and selection.admin_status == ("up",)
    assert selection.require_octet_counters is True
    assert snmp.InterfaceSelection.from_config(config(require_octet_counters=False)).require_octet_counters is False


def test_poll_walks_iftype_only_when_selecting_by_type():
    plain, typed = FakeTransport(selection_walks()), FakeTransport(selection_walks())

    default = asyncio.run(poll_with_transport(plain, config(), now=NOW))
    lags = asyncio.run(poll_with_transport(typed, config(if_types=["ieee8023adLag"]), now=NOW))

    assert snmp.IF_TYPE not in plain.walked and snmp.IF_TYPE in typed.walked
    # the default leaves out lo0 (no octet counter), after the 32-bit round found xe-0/0/2's
    assert [r.interface for r in default.records] == ["xe-0/0/0", "xe-0/0/1", "ae0", "xe-0/0/2"]
    assert by_name(default.records)["xe-0/0/2"].counters.in_octets == 50
    assert [r.interface for r in lags.records] == ["ae0"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"interfaces": ["ae0"], "include": ["xe-*"]}, "interfaces: lists the interfaces exactly and cannot be"),
        ({"if_types": ["ethernetCsmcd"]}, 'if_types: unknown ifType .*did you mean "ethernetCsmacd"'),
        ({"if_types": [0]}, "if_types: 0 is not an ifType number"),
        ({"admin_status": ["upp"]}, "admin_status: 'upp' is not an ifAdminStatus"),
        ({"include": "xe-*"}, "include: must be a list of names"),
        ({"if_index_names": {"3": "a", "7": "a"}}, "if_index_names: ifIndex 3 and 7 are both named 'a'"),
    ],
)
def test_selection_problems_are_refused_with_their_key(options, message):
    with pytest.raises(snmp.SnmpConfigError, match=message) as caught:
        config(**options)
    assert caught.value.problems[0][0] == message.split(":")[0]


# --- warnings: once per device and kind --------------------------------------------------------


def junos_like_walks() -> dict[str, dict[int, object]]:
    walks = router_walks()
    walks[IF_MTU] = {1: 2**31 - 1, 2: 2**31 - 1}  # what a Junos SRX's internal interfaces report
    return walks


def test_a_poller_warns_once_per_device_and_kind_then_only_at_debug_level(caplog):
    transports = {"srx-1": FakeTransport(junos_like_walks()), "srx-2": FakeTransport(junos_like_walks())}

    async def factory(device):
        return transports[device.equipment]

    async def run():
        async with SnmpPoller(transport_factory=factory) as poller:
            polls = [await poller.poll_device(config(equipment="srx-1"), now=NOW) for _ in range(3)]
            transports["srx-1"].scalars = {}  # the view loses sysUpTime: a new kind, reported once
            polls += [await poller.poll_device(config(equipment="srx-1"), now=NOW) for _ in range(2)]
            polls.append(await poller.poll_device(config(equipment="srx-2"), now=NOW))
            return polls

    with caplog.at_level(logging.DEBUG, logger="collectors.snmp"):
        polls = asyncio.run(run())

    mtu = "ifMtu: not a number within 0..65536, left out (ifIndex 1 2147483647, ifIndex 2 2147483647)"
    assert [poll.warnings for poll in polls] == [(mtu,), (), (), (polls[3].warnings[0],), (), (mtu,)]
    assert polls[3].warnings[0].startswith("no sysUpTime.0 in this device's view: restart detection is limited")
    assert [len(poll.repeated) for poll in polls] == [0, 1, 1, 1, 2, 0]
    assert all(len(poll.records) == 2 for poll in polls)  # the values are left out, not the interfaces
    debug = [r for r in caplog.records if r.levelno == logging.DEBUG and r.name == "collectors.snmp"]
    assert len(debug) == 5
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_without_a_memory_every_notice_is_a_warning():
    poll = asyncio.run(poll_with_transport(FakeTransport(junos_like_walks()), config(), now=NOW))
    again = asyncio.run(poll_with_transport(FakeTransport(junos_like_walks()), config(), now=NOW))

    assert len(poll.warnings) == len(again.warnings) == 1 and again.repeated == ()
