"""snmpsim data files (one per simulated device) and the harness that serves them."""
