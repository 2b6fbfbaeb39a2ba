/* The loaded cells and their checks, once a file's good rows are kept (they would otherwise hold */
/* the engine's memory, twice the file's size, through every later step). */
DROP TABLE IF EXISTS raw
