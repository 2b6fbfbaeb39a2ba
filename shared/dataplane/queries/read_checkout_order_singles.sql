-- The hosted checkout's orders paid since the last compaction (one JSON object per order, written by
-- shared/payments/webhooks.py, and fetched by the sync into one file, one object a line) into
-- `checkout_order_files`.
INSERT INTO checkout_order_files
SELECT
    order_id,
    product_id,
    quantity,
    amount_total,
    amount,
    currency,
    paid_at_epoch,
    email,
    name,
    FALSE AS compacted
FROM read_json(
    $singles,
    format = 'unstructured',
    columns = {
        'order_id': 'VARCHAR', 'product_id': 'VARCHAR', 'quantity': 'INTEGER', 'amount_total': 'BIGINT',
        'amount': 'DOUBLE', 'currency': 'VARCHAR', 'paid_at_epoch': 'BIGINT', 'email': 'VARCHAR',
        'name': 'VARCHAR'
    }
)
