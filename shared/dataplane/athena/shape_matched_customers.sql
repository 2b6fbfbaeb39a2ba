/* A customers file read with the merchant's own column matching (the mapping step): a customer keyed */
/* by their e-mail (a user_id with an "@") is keyed by it trimmed and lower-cased, as the orders matched */
/* to it are (shape_matched_orders), and the e-mail is it as given when no column is the e-mail. Any */
/* other user_id is the key as written. */
CREATE OR REPLACE TABLE raw AS
SELECT
  record,
  CASE WHEN CONTAINS(user_id, '@') THEN LOWER(TRIM(user_id)) ELSE user_id END AS user_id,
  COALESCE(email, CASE WHEN CONTAINS(user_id, '@') THEN user_id END) AS email,
  first_name,
  last_name,
  phone,
  country,
  limited_data_use,
  state,
  marketing_consent,
  city,
  postcode,
  date_of_birth,
  gender,
  external_id,
  madid
FROM raw
