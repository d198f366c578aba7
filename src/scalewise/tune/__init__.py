"""`scalewise tune`: from one profiled run, the MPI settings that beat the library's default (docs/tuning.md).

``targets.py`` what dominates the run, ``choices.py`` what each library lets a user choose for it,
``plan.py`` the screening study cut to the time budget, ``rounds.py`` the three rounds run on fresh runs,
``decision.py`` what each round decides (screen, confirm with Holm, held out), ``report.py`` what
the command prints.  That decision on drawn values (its error rate and power) is simulated by
tests/support/tune_simulation.py, for the tests and bench/tune_sim.py.
"""
