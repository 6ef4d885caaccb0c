"""`eudaimon.runtime`: the one loop and everything with effects around it (journal, clock, leases, runs).

Nothing is re-exported here: each module is imported by what it needs, so importing one part of the
runtime does not load the rest.
"""
