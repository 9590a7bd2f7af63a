"""The interfaces the simulator's data files serve (tests/collectors/snmpsim/data), as a poll reads them; the names of
the real router captures the simulator serves from ../shared/fixtures/snmprec (the community is the file's name)."""

CAPTURE_NAMES = (
    "arista_eos",
    "ciena-rls_6500-r2",
    "iosxr_asr9010",
    "junos_rpm",
    "nxos_n3k-3064pq",
    "timos",
)

# router.snmprec: ifXTable with Counter64 values above 2^63, exactly 2^63 and 2^64-1
ROUTER = {
    "xe-0/0/0": {
        "if_index": 1,
        "oper_status": "up",
        "admin_status": "up",
        "speed_mbps": 10000.0,
        "counter_discontinuity_ticks": 0,
        "counters": {
            "hc_in_octets": 18446744073000000000,  # > 2^63
            "hc_out_octets": 9223372036854775808,  # = 2^63
            "hc_in_ucast_pkts": 123456789012,
            "hc_out_ucast_pkts": 98765432109,
            "in_errors": 3,
            "out_errors": 0,
            "in_discards": 7,
            "out_discards": 1,
        },
    },
    "xe-0/0/1": {
        "if_index": 2,
        "oper_status": "up",
        "admin_status": "up",
        "speed_mbps": 10000.0,
        "counter_discontinuity_ticks": 0,
        "counters": {
            "hc_in_octets": 18446744073709551615,  # 2^64 - 1
            "hc_out_octets": 1,
            "hc_in_ucast_pkts": 9223372036854775807,
            "hc_out_ucast_pkts": 0,
            "in_errors": 0,
            "out_errors": 0,
            "in_discards": 0,
            "out_discards": 0,
        },
    },
    "ge-1/0/0": {
        "if_index": 3,
        "oper_status": "down",
        "admin_status": "up",
        "speed_mbps": 1000.0,
        "counter_discontinuity_ticks": 0,
        "counters": {
            "hc_in_octets": 0,
            "hc_out_octets": 0,
            "hc_in_ucast_pkts": 0,
            "hc_out_ucast_pkts": 0,
            "in_errors": 4294967295,
            "out_errors": 12,
            "in_discards": 0,
            "out_discards": 4294967294,
        },
    },
    "ae0": {
        "if_index": 17,
        "oper_status": "up",
        "admin_status": "up",
        "speed_mbps": 20000.0,
        "counter_discontinuity_ticks": 12345,
        "counters": {
            "hc_in_octets": 5000000000000,
            "hc_out_octets": 6000000000000,
            "hc_in_ucast_pkts": 7000000000,
            "hc_out_ucast_pkts": 8000000000,
            "in_errors": 0,
            "out_errors": 0,
            "in_discards": 0,
            "out_discards": 0,
        },
    },
}

# legacy.snmprec: ifTable only (32-bit counters, ifSpeed, no engine boots)
LEGACY = {
    "eth0": {
        "if_index": 1,
        "oper_status": "up",
        "admin_status": "up",
        "speed_mbps": 100.0,
        "counters": {
            "in_octets": 2**32 - 1,
            "out_octets": 17,
            "in_errors": 5,
            "out_errors": 0,
            "in_discards": 2,
            "out_discards": 0,
        },
    },
    "Serial0/0": {
        "if_index": 2,
        "oper_status": "lowerLayerDown",
        "admin_status": "up",
        "speed_mbps": 2.048,
        "counters": {
            "in_octets": 1000,
            "out_octets": 2000,
            "in_errors": 0,
            "out_errors": 2**32 - 1,
            "in_discards": 0,
            "out_discards": 3,
        },
    },
}
