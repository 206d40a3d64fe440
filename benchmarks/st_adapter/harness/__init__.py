"""Our implementation of the ``harness`` package upstream's system tests import (see ``core``)."""
