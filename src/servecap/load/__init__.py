"""servecap.load."""
