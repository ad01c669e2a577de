"""servecap.client."""
