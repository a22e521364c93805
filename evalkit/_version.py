__version__ = "0.1.0"
# the name on PyPI (`pip install evalkit-ir`; "evalkit" there is an unrelated project); the import name and the command stay evalkit
DISTRIBUTION = "evalkit-ir"
