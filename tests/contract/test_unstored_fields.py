"""Wire fields the centre accepts and then loses: every one must have a column or be kept in ``extra``.

measurements_snmpsample has no ``extra`` column, so an SNMP sample's ``host``, ``admin_status``,
``error``, ``tool_version``, ``exit_code``, ``stderr_excerpt`` and ``raw_excerpt`` are validated, acknowledged
with a 200 and dropped: an interface shut down by an operator (admin down) cannot be told from a failed
one, and a sample whose poll failed (``error``) is stored as a row of NULLs that does not say so.
The names an SNMP sample references must also fit the inventory: the wire allows 128-character equipment
names, the inventory's equipment.name is a varchar(100).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from collectors.records import RECORD_TYPES
from collectors.snmp import SnmpDeviceConfig, poll_device
from tests.contract.test_wire_schema_columns import holds, wire_fields
from tests.contract.wire import agent_records, deliver, stored_rows, table_columns
from wanmon.measurements.columns import TABLES, Source

pytestmark = [pytest.mark.django_db, pytest.mark.integration]


@pytest.mark.parametrize("kind", sorted(RECORD_TYPES))
def test_every_wire_field_has_a_column_or_is_kept_in_extra(kind):
    table = TABLES[kind]
    real = table_columns(table.name)
    top_level = {name.split(".")[0] for name, _ in wire_fields(RECORD_TYPES[kind])}

    lost = sorted(
        name for name in top_level if name != "counters" and table.column_of(name) is None and "extra" not in real
    )

    assert lost == [], f"{table.name}: wire fields stored nowhere: {lost}"


@pytest.mark.parametrize(
    ("field", "inventory_table", "inventory_column"),
    [
        ("equipment", "inventory_equipment", "name"),
        ("interface", "inventory_interface", "name"),
    ],
)
def test_the_names_an_snmp_sample_references_fit_the_inventory(field, inventory_table, inventory_column):
    wire_type = dict(wire_fields(RECORD_TYPES["snmp"]))[field]
    column = table_columns(inventory_table)[inventory_column]
    assert TABLES["snmp"].column_of(field).source in (Source.EQUIPMENT, Source.INTERFACE)

    assert holds(wire_type, column) is None


def test_a_real_snmp_polls_admin_status_host_and_a_failed_polls_error_are_stored(client, centre):
    pytest.importorskip("snmpsim", reason="snmpsim (dev extra) is needed for the SNMP simulator")
    from tests.collectors.snmpsim.simulator import SnmpSimulator

    # given the agent's poll of a router whose ge-1/0/0 is administratively up and operationally down
    now = datetime.now(UTC).replace(microsecond=0)
    with SnmpSimulator() as sim:
        config = SnmpDeviceConfig(equipment="lab-router", host=sim.host, port=sim.port, community="router")
        poll = asyncio.run(poll_device(config, now))
    centre.equipment("lab-router")
    records = agent_records(poll.records, now=now)
    failed = {
        "type": "snmp",
        "time": now.isoformat(),
        "equipment": "lab-router",
        "interface": "xe-0/0/0",
        "counters": {},
        "error": "ifXTable walk timed out after 3 retries",
    }
    assert {(r.admin_status, r.host) for r in records} == {("up", "127.0.0.1")}

    # when they are uploaded
    batch = deliver(client, centre.token, [*records, failed])

    # then what the agent sent can be read back
    rows = stored_rows(batch.batch_id)["snmp"]
    assert len(rows) == len(records) + 1
    stored_text = [" ".join(map(str, row.values())) for row in rows]
    assert all("127.0.0.1" in text for text in stored_text[:-1]), "the polled address (host) is stored nowhere"
    (down,) = [text for row, text in zip(rows, stored_text, strict=False) if row["oper_status"] == "down"]
    assert "up" in down.replace(",", " ").split(), "admin_status up of the interface that is down is stored nowhere"
    assert "ifXTable walk timed out" in stored_text[-1], f"the failed poll's error is stored nowhere: {rows[-1]}"
