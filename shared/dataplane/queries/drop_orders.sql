-- The good order lines, once orders.parquet is written and the lines encoded: the later steps read
-- encoded_lines, and the engine's memory goes to them rather than to a table no step reads.
DROP TABLE IF EXISTS orders
