-- What the merchant no longer has of the hosted checkout's orders: what the payment provider refunded
-- (cumulative) and what a lost dispute took back, in the currency's smallest unit, as
-- shared/repositories/payments.py keeps them in `REFUND#<order id>`, into `checkout_refunds`, one row
-- per such order.
CREATE OR REPLACE TABLE checkout_refunds AS
SELECT
    unnest(CAST($order_ids AS VARCHAR[])) AS order_id,
    unnest(CAST($amounts_refunded AS BIGINT[])) AS amount_refunded
