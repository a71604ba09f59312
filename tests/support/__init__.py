"""Helpers the test suite shares, one module per concern; tests import them from here.

`tests/` is on `sys.path` (pyproject's pytest `pythonpath`), so this package imports as `support`:
`from support.serve import Serve`. A conftest holds only fixtures and hooks; it may import from
here, and no test module imports from a conftest (`tests/test_house_rules.py` checks it).
"""
