"""`xtts serve`: a run spoken over HTTP, with a page to listen on."""
