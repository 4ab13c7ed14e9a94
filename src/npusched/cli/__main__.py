"""``python -m npusched.cli``."""

import sys

from npusched.cli import main

sys.exit(main())
