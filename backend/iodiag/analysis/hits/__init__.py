"""Hit builders several checks share: a trace's phases and stragglers (``trace``), the streamed-trace
variants (``streamed``) and lock contention (``locks``). They build ``registry.Hit`` objects from views;
a check module imports these, never another check module.
"""
