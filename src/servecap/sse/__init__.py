"""servecap.sse."""
