"""`python -m askbridge`: the `askbridge` command, for where its script is not on the PATH."""

import sys

from askbridge.bots.cli import main

if __name__ == "__main__":
    sys.exit(main())
