import sys

from bayeval.cli.main import main

sys.exit(main())
