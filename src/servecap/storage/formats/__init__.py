"""Other tools' file formats: what servecap writes for them (`servecap export`, a run's
`br/`) and what it reads from them (`servecap import`: `registry` says which format a path
is, `store` writes what a reader made); one module a format and direction."""
