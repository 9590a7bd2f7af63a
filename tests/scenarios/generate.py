"""Generate the regression corpus of the diagnosis engine (tests/scenarios/*.yaml).

    .venv/bin/python tests/scenarios/generate.py            # (re)write every generated scenario
    .venv/bin/python tests/scenarios/generate.py case6      # only the files whose name contains 'case6'

Each ``scenario_*`` function of tests/scenarios/regression/ (one module per case, the library in
``regression/builder.py``) builds one file of docs/scenario-format.md: a topology of real LHC
sites and carriers, a timeline of nuttcp tests (every 30 min), owamp sessions (600 packets at
10/s every 5 min), SNMP polls (every 60 s) and traceroutes, and the ``expect`` block an expert
would demand.  Every number comes from the physics of docs/diagnosis.md#the-physics, computed by the physics
oracle of the corpora (tests/scenarios/noise/physics.py, independent of the engine's on purpose):

* window limit R_w = W * 8 / RTT and BDP = C * RTT / 8;
* the rate a stream reaches under a loss p: the Mathis ceiling (C = sqrt(3/2) for Reno, about
  twice that for CUBIC), never more than the window limit, the capacity or the host's limit;
* TCP retransmits = p * segments sent (segments = rate * duration / 8 / MSS);
* SNMP Counter64 octets advance by rate * 60 s / 8 per poll, wrap modulo 2^64; sysUpTime advances
  6000 ticks per 60 s poll and restarts from the boot after a reboot;
* one-way delays are fibre propagation (200 km per ms) plus processing; forward + reverse minimum
  equals the RTT when the clocks agree.

Randomness (jitter of rates and delays, which session loses a packet) is seeded from the scenario
name, so the output is reproducible byte for byte.  Most incidents start after the first third of
the timeline, which the replay uses as the path's baseline.

The two example scenarios (reverse-path-loss-fzk, window-limited-asgc) are copies of
scenarios/examples/ and are not generated here.
"""


from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT) not in sys.path:  # run as a script: the library is imported as tests.scenarios.regression
    sys.path.insert(0, str(ROOT))

from tests.scenarios.regression.builder import Scenario  # noqa: E402
from tests.scenarios.regression.case1 import scenario_case1  # noqa: E402
from tests.scenarios.regression.case2 import scenario_case2  # noqa: E402
from tests.scenarios.regression.case3 import scenario_case3  # noqa: E402
from tests.scenarios.regression.case4 import scenario_case4  # noqa: E402
from tests.scenarios.regression.case5 import scenario_case5  # noqa: E402
from tests.scenarios.regression.case6 import scenario_case6  # noqa: E402
from tests.scenarios.regression.case7 import scenario_case7  # noqa: E402
from tests.scenarios.regression.case8 import scenario_case8, scenario_near_miss_port_work  # noqa: E402
from tests.scenarios.regression.case9 import scenario_case9  # noqa: E402
from tests.scenarios.regression.near_misses import (  # noqa: E402
    scenario_near_miss_busy_link,
    scenario_near_miss_long_paths,
    scenario_near_miss_maintenance,
    scenario_near_miss_trunk,
)
from tests.scenarios.regression.symptoms_elements import (  # noqa: E402
    scenario_interface_errors,
    scenario_link_congestion,
    scenario_route_change,
    scenario_unexplained,
)
from tests.scenarios.regression.symptoms_paths import (  # noqa: E402
    scenario_clock_unsync,
    scenario_healthy,
    scenario_mtu,
    scenario_path_down,
    scenario_reordering,
)

SCENARIOS: list[Callable[[], Scenario]] = [
    scenario_case1,
    scenario_case2,
    scenario_case3,
    scenario_case4,
    scenario_case5,
    scenario_case6,
    scenario_case7,
    scenario_case8,
    scenario_case9,
    scenario_healthy,
    scenario_clock_unsync,
    scenario_mtu,
    scenario_reordering,
    scenario_path_down,
    scenario_interface_errors,
    scenario_link_congestion,
    scenario_route_change,
    scenario_unexplained,
    scenario_near_miss_trunk,
    scenario_near_miss_maintenance,
    scenario_near_miss_port_work,
    scenario_near_miss_long_paths,
    scenario_near_miss_busy_link,
]


def main(argv: Iterable[str]) -> int:
    wanted = list(argv)
    for build in SCENARIOS:
        sc = build()
        if wanted and not any(w in sc.name for w in wanted):
            continue
        text = sc.document()
        target = HERE / f"{sc.name}.yaml"
        target.write_text(text)
        print(f"{target.name}: {len(sc.measurements)} measurements, {len(text) / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
