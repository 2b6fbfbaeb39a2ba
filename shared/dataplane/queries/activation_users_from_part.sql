-- A part of an activation's users file (a Parquet file of activation_write_part's rows) as users_input.
CREATE OR REPLACE TABLE users_input AS SELECT * FROM read_parquet($path)
