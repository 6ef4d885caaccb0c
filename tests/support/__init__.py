"""What test folders share: free ports, sample tools, instrumented stores.

Importable from every folder as `support.NAME` (`pythonpath = ["tests"]` in pyproject). A helper
used by one folder only stays in that folder, in a module with a name of its own
(`test_shared_test_helpers_have_their_own_names.py`).
"""
