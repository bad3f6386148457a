"""`python -m conformance.cli`: the `autograd-conformance` command."""

import sys

from conformance.cli import main

sys.exit(main())
