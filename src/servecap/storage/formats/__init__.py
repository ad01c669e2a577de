"""Other tools' file formats: what servecap writes for them (one module a format)."""
