"""Other tools' result files read into servecap runs (`servecap import`): one module per
format, `registry` says which a path is, `store` writes what a reader made."""
