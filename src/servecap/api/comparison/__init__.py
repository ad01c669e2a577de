"""Comparing deployments under one load: its config, sides, lock-step runs and report."""
