/* A file's checked cells, once its good rows are kept and its problems recorded. */
DROP TABLE IF EXISTS checked
