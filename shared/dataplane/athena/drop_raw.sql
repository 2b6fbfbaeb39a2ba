/* The loaded cells and their checks, once a file's good rows are kept. */
DROP TABLE IF EXISTS raw
