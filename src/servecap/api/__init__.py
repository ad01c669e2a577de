"""L5: the entry points front ends call, by job: demo > comparison > stored > predict > run."""
