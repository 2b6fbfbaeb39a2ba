-- The products rows the record model accepted, with its values (a CSV the sync writes), into `fixed`.
CREATE OR REPLACE TABLE fixed AS
SELECT * FROM read_csv(
    $path,
    header = true,
    auto_detect = false,
    columns = {'record': 'BIGINT', 'product_id': 'VARCHAR', 'name': 'VARCHAR', 'category': 'VARCHAR', 'price': 'DOUBLE'}
)
