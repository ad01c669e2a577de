"""servecap.api."""
