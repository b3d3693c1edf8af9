"""`python -m hwgen.cli`: the hwgen command."""
import sys

from . import main

sys.exit(main())
