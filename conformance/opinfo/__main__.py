import sys

from conformance.opinfo.command import main

sys.exit(main())
