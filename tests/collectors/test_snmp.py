"""Unit tests of the SNMP collector: pure record building, config, and polling through a fake transport.

No network and no pysnmp here (tests/collectors/test_snmp_sim.py polls a real simulated agent).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import msgspec
import pytest

from collectors import snmp
from collectors.records import decode_records, record_errors, record_to_dict
from collectors.snmp import SnmpDeviceConfig, build_records, fallback_columns, index_column, oids, read_device
from tests.collectors.snmpsim.interfaces import ROUTER

NOW = datetime(2026, 3, 1, 11, 1, tzinfo=UTC)
ABOVE_2_63 = 18446744073000000000  # docs/scenario-format.md's example: above 2^63, below 2^64
COUNTER64_MAX = 2**64 - 1
COUNTER32_MAX = 2**32 - 1


def router_walks() -> dict[str, dict[int, object]]:
    """Two interfaces of a modern router: ifXTable with HC counters (and the 32-bit ones too)."""
    return {
        oids.IF_NAME: {1: b"xe-0/0/0", 2: b"xe-0/0/1"},
        oids.IF_DESCR: {1: b"Juniper xe-0/0/0", 2: b"Juniper xe-0/0/1"},
        oids.IF_ALIAS: {1: b"CERN-FZK primary", 2: b""},
        oids.IF_HIGH_SPEED: {1: 10000, 2: 100000},
        oids.IF_MTU: {1: 9192, 2: 1500},
        oids.IF_ADMIN_STATUS: {1: 1, 2: 1},
        oids.IF_OPER_STATUS: {1: 1, 2: 2},
        oids.IF_HC_IN_OCTETS: {1: ABOVE_2_63, 2: COUNTER64_MAX},
        oids.IF_HC_OUT_OCTETS: {1: 2**63, 2: 0},
        oids.IF_HC_IN_UCAST_PKTS: {1: 123456789012, 2: 2**63 - 1},
        oids.IF_HC_OUT_UCAST_PKTS: {1: 98765432109, 2: 5},
        oids.IF_IN_ERRORS: {1: 3, 2: COUNTER32_MAX},
        oids.IF_OUT_ERRORS: {1: 0, 2: 1},
        oids.IF_IN_DISCARDS: {1: 7, 2: 0},
        oids.IF_OUT_DISCARDS: {1: 1, 2: 0},
        oids.IF_COUNTER_DISCONTINUITY_TIME: {1: 0, 2: 12345},
        oids.IF_IN_OCTETS: {1: 4000000000, 2: 1},
        oids.IF_OUT_OCTETS: {1: 12345, 2: 2},
    }


def legacy_walks() -> dict[str, dict[int, object]]:
    """An old switch: ifTable only (no ifName, no HC counters, no ifHighSpeed)."""
    return {
        oids.IF_DESCR: {1: b"eth0", 2: b"Serial0/0"},
        oids.IF_MTU: {1: 1500, 2: 4470},
        oids.IF_SPEED: {1: 100_000_000, 2: 2_048_000},
        oids.IF_ADMIN_STATUS: {1: 1, 2: 1},
        oids.IF_OPER_STATUS: {1: 1, 2: 7},
        oids.IF_IN_OCTETS: {1: COUNTER32_MAX, 2: 1000},
        oids.IF_OUT_OCTETS: {1: 17, 2: 2000},
        oids.IF_IN_ERRORS: {1: 5, 2: 0},
        oids.IF_OUT_ERRORS: {1: 0, 2: COUNTER32_MAX},
        oids.IF_IN_DISCARDS: {1: 2, 2: 0},
        oids.IF_OUT_DISCARDS: {1: 0, 2: 3},
    }


SCALARS = {oids.SYS_UPTIME: 883412200, oids.SNMP_ENGINE_BOOTS: 7}


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
        "counters": ROUTER["xe-0/0/0"]["counters"],  # router_walks() serve the simulator's router
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
    records = by_name(build_records("old-switch", legacy_walks(), {oids.SYS_UPTIME: 4294967000}, NOW))

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
    del walks[oids.IF_HC_IN_OCTETS][2]  # a virtual interface without HC octets
    del walks[oids.IF_HC_OUT_OCTETS][2]

    records = by_name(build_records("r", walks, SCALARS, NOW))

    assert records["xe-0/0/0"].counters.hc_in_octets == ABOVE_2_63
    assert records["xe-0/0/0"].counters.in_octets is None
    assert records["xe-0/0/1"].counters.hc_in_octets is None
    assert (records["xe-0/0/1"].counters.in_octets, records["xe-0/0/1"].counters.out_octets) == (1, 2)
    assert records["xe-0/0/1"].counters.hc_in_ucast_pkts == 2**63 - 1  # other HC columns still used


def test_missing_columns_give_none_not_zero():
    walks = {oids.IF_NAME: {5: b"ge-0/0/5"}, oids.IF_OPER_STATUS: {5: 1}, oids.IF_HC_IN_OCTETS: {5: 42}}

    (record,) = build_records("r", walks, {oids.SYS_UPTIME: 100}, NOW)

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
    reading = read_device({oids.IF_HC_IN_OCTETS: {9: 1}}, {oids.SYS_UPTIME: 1})

    (row,) = reading.interfaces
    assert (row.name, row.oper_status) == ("ifIndex.9", None)
    assert reading.warnings == ("ifOperStatus: absent, reported as 'unknown' (ifIndex.9)",)
    (record,) = build_records("r", {oids.IF_HC_IN_OCTETS: {9: 1}}, {oids.SYS_UPTIME: 1}, NOW)
    assert record.oper_status == "unknown"  # required by the wire schema; IF-MIB's own "unknown"


def test_names_are_cleaned_for_the_wire_schema():
    walks = {
        oids.IF_NAME: {1: b"Gi0/1\x00", 2: b"  ", 3: "x" * 200, 4: b"caf\xc3\xa9 port"},
        oids.IF_DESCR: {2: b"GigabitEthernet0/2"},
        oids.IF_OPER_STATUS: {1: 1, 2: 1, 3: 1, 4: 1},
    }

    records = build_records("r", walks, {oids.SYS_UPTIME: 1}, NOW)

    assert [r.interface for r in records] == ["Gi0/1", "GigabitEthernet0/2", "x" * 128, "café port"]
    assert all(record_errors(r, now=NOW) == [] for r in records)


def test_out_of_range_values_are_dropped_with_a_warning():
    walks = {
        oids.IF_NAME: {1: b"xe-0/0/0"},
        oids.IF_OPER_STATUS: {1: 9},  # not an IF-MIB status
        oids.IF_IN_ERRORS: {1: 2**32},  # a Counter32 cannot hold this
        oids.IF_HC_IN_OCTETS: {1: 2**64},
        oids.IF_HC_OUT_OCTETS: {1: -1},
        oids.IF_OUT_ERRORS: {1: b"12"},
        oids.IF_HIGH_SPEED: {1: 10000},
    }

    reading = read_device(walks, {oids.SYS_UPTIME: 2**32})

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
    (record,) = build_records("r", walks, {oids.SYS_UPTIME: 2**32}, NOW)
    assert record.sys_uptime_ticks is None and record.counters.hc_in_octets is None


def test_values_of_one_kind_make_one_warning_per_poll():
    # A Junos SRX240: 16 internal interfaces report ifMtu 2147483647 (junos_rpm.snmprec)
    walks = {oids.IF_NAME: {i: f"pp{i}".encode() for i in range(1, 17)}}
    walks[oids.IF_MTU] = dict.fromkeys(range(1, 17), 2**31 - 1)
    walks[oids.IF_OPER_STATUS] = dict.fromkeys(range(1, 17), 1)

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
    reading = read_device(router_walks(), {oids.SYS_UPTIME: 5, snmp.SNMP_ENGINE_TIME: 26373899})

    assert (reading.sys_uptime_ticks, reading.uptime_source, reading.notices) == (5, "sysUpTime.0", ())


def test_without_any_uptime_the_records_keep_their_counters_and_say_restart_detection_is_limited():
    walks = router_walks()
    del walks[oids.IF_COUNTER_DISCONTINUITY_TIME]

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
    (warning,) = read_device(router_walks(), {oids.SNMP_ENGINE_BOOTS: 3}).warnings
    assert warning.endswith(
        "restarts are detected from snmpEngineBoots.0, ifCounterDiscontinuityTime (2 of 2 interfaces)"
    )


def test_oper_and_admin_status_labels():
    walks = {oids.IF_OPER_STATUS: {i: i for i in range(1, 8)}, oids.IF_ADMIN_STATUS: {1: 1, 2: 2, 3: 3}}

    records = build_records("r", walks, {oids.SYS_UPTIME: 1}, NOW)

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
        oids.IF_OPER_STATUS: {1: 1, 2: 1, 3: 1, 4: 1},
        oids.IF_HIGH_SPEED: {1: 0, 2: 400000},
        oids.IF_SPEED: {1: 10_000_000, 2: 2**32 - 1, 3: 2**32 - 1, 4: 1_000_000_000},
    }

    records = build_records("r", walks, {oids.SYS_UPTIME: 1}, NOW)

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
        oids.IF_NAME: {3: b"Vlan10", 7: b"Vlan10", 8: b"Vlan20", 9: b"y" * 130, 10: b"y" * 128 + b"z"},
        oids.IF_OPER_STATUS: dict.fromkeys((3, 7, 8, 9, 10), 1),
        oids.IF_HC_IN_OCTETS: {3: 30, 7: 70, 8: 80, 9: 90, 10: 100},
    }

    reading = read_device(walks, {oids.SYS_UPTIME: 1})

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
    records = build_records("r", walks, {oids.SYS_UPTIME: 1}, NOW)
    assert [(r.interface, r.counters.hc_in_octets) for r in records][:2] == [("Vlan10#3", 30), ("Vlan10#7", 70)]
    assert all(record_errors(r, now=NOW) == [] for r in records)  # within the wire schema's 128 characters


def test_shared_names_are_stable_whatever_the_selection_and_a_name_given_by_ifindex_is_kept():
    walks = {oids.IF_NAME: {3: b"Vlan10", 7: b"Vlan10"}, oids.IF_OPER_STATUS: {3: 1, 7: 1}}

    only_7 = read_device(walks, SCALARS, interface_filter=["Vlan10#7"])
    both = read_device(walks, SCALARS, interface_filter=["Vlan10"])
    renamed = read_device(walks, SCALARS, if_index_names={3: "Vlan10"})

    assert [row.name for row in only_7.interfaces] == ["Vlan10#7"]
    assert [row.name for row in both.interfaces] == ["Vlan10#3", "Vlan10#7"]
    assert [row.name for row in renamed.interfaces] == ["Vlan10", "Vlan10#7"]


def test_a_suffixed_name_that_is_another_interfaces_real_name_leaves_that_one_out():
    walks = {oids.IF_NAME: {3: b"Vlan10", 7: b"Vlan10", 9: b"Vlan10#7"}, oids.IF_OPER_STATUS: {3: 1, 7: 1, 9: 1}}

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
        f"{oids.IF_HC_IN_OCTETS}.1": 5,
        f"{oids.IF_HC_IN_OCTETS}.17": ABOVE_2_63,
        f"{oids.IF_HC_IN_OCTETS}.1.2": 9,  # not a single ifIndex
        f"{oids.IF_HC_IN_OCTETS}0.3": 9,  # another column sharing the text prefix (...1.1.6 vs ...1.1.60)
    }

    assert index_column(oids.IF_HC_IN_OCTETS, rows) == {1: 5, 17: ABOVE_2_63}


def test_fallback_columns_only_for_what_selected_interfaces_lack():
    assert fallback_columns(read_device(router_walks(), SCALARS)) == ()
    first_round = {column: rows for column, rows in legacy_walks().items() if column in oids.PRIMARY_COLUMNS}
    assert fallback_columns(read_device(first_round, SCALARS)) == (oids.IF_IN_OCTETS, oids.IF_OUT_OCTETS, oids.IF_SPEED)
    assert fallback_columns(read_device(legacy_walks(), SCALARS)) == ()  # the second round found them
    walks = router_walks()
    del walks[oids.IF_HC_OUT_OCTETS][2]
    del walks[oids.IF_OUT_OCTETS]
    assert fallback_columns(read_device(walks, SCALARS)) == (oids.IF_OUT_OCTETS,)
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
