"""Derive the package list from the two source folders, so that a new plugin folder can never be left out."""
from setuptools import find_packages, setup

setup(
    packages=["tokembed", *("tokembed." + p for p in find_packages("framework"))]
    + ["tokembed.plugins", *("tokembed.plugins." + p for p in find_packages("plugins"))],
)
