"""`python -m scheduler_operator` is the `scheduler-operator` command."""

import sys

from .cli import main

sys.exit(main())
