"""Predicting capacity on a simulator profile, and verifying predicted users on a server."""
