"""`scalewise calibrate`: this machine's (or two hosts') network parameters for the what-if replay.

``pingpong.py`` measures and fits the ping-pong into a network, ``collbench.py`` times a few
collectives and sets them beside their replay, ``measure.py`` is the one call the command makes
(on this host, two hosts or the emulated cluster), ``report.py`` the tables and sentences it prints
(docs/whatif.md).
"""
