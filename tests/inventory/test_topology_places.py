"""An error about a trunk member names the member's own place in the document, after a bad or repeated one."""

from __future__ import annotations

import pytest

from wanmon.inventory.topology import TopologyInvalid
from wanmon.inventory.topology.validation import topology_validate


def test_member_errors_name_the_members_place():
    members = ["cern-border", "cern-border:xe-0/0/9", "cern-border:xe-0/0/9", "nope:x"]
    with pytest.raises(TopologyInvalid) as raised:
        topology_validate({"equipment": [{"name": "cern-border"}], "trunks": [{"name": "lag", "members": members}]})
    assert [str(e) for e in raised.value.errors] == [
        "trunks[0].members[0]: must be 'equipment:interface'",
        "trunks[0].members[2]: duplicate member 'cern-border:xe-0/0/9'",
        "trunks[0].members[1]: unknown interface 'cern-border:xe-0/0/9'",
        "trunks[0].members[3]: unknown equipment 'nope'",
    ]
