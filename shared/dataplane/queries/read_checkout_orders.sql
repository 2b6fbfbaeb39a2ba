-- The hosted checkout's paid orders (one JSON object per order, shared/payments/webhooks.py), read
-- into `checkout_orders`: the buyer's e-mail trimmed and lower-cased, as the pixel's buyer id is made.
CREATE OR REPLACE TABLE checkout_orders AS
SELECT
    order_id,
    product_id,
    quantity,
    amount,
    make_timestamp(paid_at_epoch * 1000000) AS paid_at,
    nullif(lower(trim(email)), '') AS email,
    nullif(trim(name), '') AS name
FROM read_json(
    $glob,
    format = 'unstructured',
    columns = {
        'order_id': 'VARCHAR', 'product_id': 'VARCHAR', 'quantity': 'INTEGER', 'amount': 'DOUBLE',
        'paid_at_epoch': 'BIGINT', 'email': 'VARCHAR', 'name': 'VARCHAR'
    }
)
