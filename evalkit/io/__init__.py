"""Reading and writing: one door to read a run or a gold (:mod:`evalkit.io.reading`: files and in-memory inputs),
text decoding, the read-ahead, runs judged from their files, output transactions, manifests, and the generic file
formats (:mod:`evalkit.io.formats`)."""
