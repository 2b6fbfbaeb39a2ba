-- What the payment provider has refunded of the hosted checkout's orders (each refunded order's
-- cumulative amount, in the currency's smallest unit, as shared/repositories/payments.py keeps it in
-- `REFUND#<order id>`), into `checkout_refunds`, one row per refunded order.
CREATE OR REPLACE TABLE checkout_refunds AS
SELECT
    unnest(CAST($order_ids AS VARCHAR[])) AS order_id,
    unnest(CAST($amounts_refunded AS BIGINT[])) AS amount_refunded
