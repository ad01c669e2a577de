"""servecap.ui."""
