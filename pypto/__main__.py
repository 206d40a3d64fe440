"""``python -m pypto``: the ``pypto`` command line."""

import sys

from pypto.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
