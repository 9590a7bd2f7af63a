"""The regression corpus of the diagnosis engine (tests/scenarios/*.yaml), one module per case: the case studies
of docs/diagnosis.md#case-studies (case1 ... case9), single symptoms of paths and of elements, and near misses.
``builder`` is the scenario-building library they share (``@scenario`` declares one), ``places`` the sites,
carriers and routers, ``counters`` the SNMP counters of an interface; every figure comes from the physics oracle
(tests/scenarios/noise/physics.py). tests/scenarios/generate.py writes the files.
"""
