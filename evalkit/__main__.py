from evalkit.cli import entry_point

entry_point()
