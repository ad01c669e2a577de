"""Stored results for the front ends: runs, imported tables, capacity plans, the report."""
