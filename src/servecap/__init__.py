"""servecap: benchmark OpenAI-compatible inference servers and plan capacity from the results."""

__version__ = "0.1.0"
