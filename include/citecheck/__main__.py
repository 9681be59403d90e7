"""`python -m citecheck …` entry point."""

from citecheck.cli import main

raise SystemExit(main())
