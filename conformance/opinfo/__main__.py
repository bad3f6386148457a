import sys

from conformance.opinfo.run import main

sys.exit(main())
