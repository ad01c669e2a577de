"""servecap.cli."""
