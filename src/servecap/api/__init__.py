"""L5: the library entry points front ends call: run, plan, import, report."""
