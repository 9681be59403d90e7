"""citecheck: do an assistant's citations say what its sentences say?

The package is plain Python with no Airflow imports, so the CLI, the tests and the DAGs all run
the same code. Heavy dependencies (torch, sentence-transformers, anthropic, great_expectations)
are imported inside the functions that need them.
"""

__version__ = "0.1.0"
