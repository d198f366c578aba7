"""`scalewise memory`: MPI connection memory measured, fitted and projected to a target machine (docs/memory.md).

``measure.py`` runs the probe and is the command's one call, ``analysis.py`` the fits, projection and
findings, ``figures.py`` and ``registry.py`` the B10 figure, ``html.py`` the page, ``terminal.py`` the table.
"""
