"""``python -m pypto.tools.ir_trace <passes_dump>``."""

import sys

from pypto.tools.ir_trace.cli import main

sys.exit(main())
