"""How an output reaches its file: the staging temporaries (:mod:`evalkit.writing.temporaries`)."""
