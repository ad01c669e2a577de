"""The performance model, in virtual time: no sockets, no clocks.

``params`` (the parameters, grouped by mechanism), ``step_engine`` (continuous batching in
steps), ``step_cost`` (what a step costs), ``admission`` (the admission policy),
``prefix_cache`` and ``blocks`` (the KV budget and its prefix cache), ``output_lag``,
``warmup`` (warm-up and drift), ``fixed_engine`` (the deterministic profile's exact
schedule), ``engines`` (which engine a profile gets), ``sweep`` and ``users_sweep``
(closed-loop and users sweeps).
"""
