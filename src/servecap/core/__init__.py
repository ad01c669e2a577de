"""L0: records, configurations, errors and the clock every other layer shares."""
