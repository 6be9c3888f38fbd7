"""``python -m torchmemlint`` runs the command line."""
import sys

from torchmemlint.cli import main

sys.exit(main())
