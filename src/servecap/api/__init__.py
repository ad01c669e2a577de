"""L5: the entry points front ends call, by job.

demo > capacity > comparison > stored > predict > run.
"""
