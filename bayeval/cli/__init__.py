"""The ``bayeval`` command line (see :mod:`bayeval.cli.main`)."""
