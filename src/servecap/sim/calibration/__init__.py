"""Calibration: fit a profile's model to measured levels and say how far to trust it.

``measured_levels`` reads a run's levels, ``fitting`` searches the free parameters,
``holdout`` measures the error on levels the fit did not see, ``identify`` names the
parameters the levels leave loose, ``bases`` gives the starting points and ``calibrate``
ties them together into a profile with its ``[calibration]`` table.
"""
