"""What the test modules share: paths, fake adapters, helpers and data more than one test module uses.

A test module imports from here (or from its folder's conftest.py fixtures), never from another test module.
"""
