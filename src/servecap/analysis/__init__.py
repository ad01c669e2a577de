"""servecap.analysis."""
