"""How an output reaches its file: the staging temporaries (:mod:`evalkit.io.writing.temporaries`) and folders
written whole (:mod:`evalkit.io.writing.folders`)."""
