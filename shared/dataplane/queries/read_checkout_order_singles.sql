-- The hosted checkout's orders paid since the last compaction (one JSON object per order, written by
-- shared/payments/webhooks.py, and fetched by the sync into one file, one object a line) into
-- `checkout_order_files`, its columns matched by name (the table declares them once; the types the
-- JSON is read as are these columns').
INSERT INTO checkout_order_files BY NAME
SELECT *, FALSE AS compacted
FROM read_json(
    $singles,
    format = 'unstructured',
    columns = {
        'order_id': 'VARCHAR', 'product_id': 'VARCHAR', 'quantity': 'INTEGER', 'amount_total': 'BIGINT',
        'amount': 'DOUBLE', 'currency': 'VARCHAR', 'paid_at_epoch': 'BIGINT', 'email': 'VARCHAR',
        'name': 'VARCHAR'
    }
)
