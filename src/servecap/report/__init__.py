"""servecap.report."""
