-- The orders rows the record model accepted, with its values (a CSV the sync writes), into `fixed`.
CREATE OR REPLACE TABLE fixed AS
SELECT * FROM read_csv(
    $path,
    header = true,
    auto_detect = false,
    columns = {
        'record': 'BIGINT', 'order_id': 'VARCHAR', 'user_id': 'VARCHAR', 'product_id': 'VARCHAR',
        'quantity': 'INTEGER', 'amount': 'DOUBLE', 'timestamp': 'TIMESTAMP'
    }
)
