"""Start snmpsim's command responder (``snmpsim-command-responder``) for tests and benchmarks.

Run as ``python responder.py ARGS...`` with the responder's own arguments. Why not the console
script: snmpsim 1.2.2's ``snmpsim/utils.py`` imports ``pysmi`` only to print its version in the
banner, but declares pysmi as a *dev* extra, so the installed console script dies with
``ModuleNotFoundError: No module named 'pysmi'``. pysmi (a MIB compiler) plays no part in serving
``.snmprec`` files; when it is missing we register a stand-in module with a version string.
"""

import sys
import types

try:
    import pysmi  # noqa: F401
except ImportError:
    sys.modules["pysmi"] = types.SimpleNamespace(__version__="not installed")  # type: ignore[assignment]

from snmpsim.commands.responder import main  # noqa: E402

if __name__ == "__main__":
    sys.argv[0] = "snmpsim-command-responder"
    sys.exit(main())
