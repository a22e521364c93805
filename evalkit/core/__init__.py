"""The foundation every layer may use: errors, one options object, input rules (what a cell may hold), column
aliases, safe text, JSON, digests, list parsing, entry points."""
