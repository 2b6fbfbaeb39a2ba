-- A customers export keyed by e-mail (Shopify's: shared/datasources/shop_exports.py), its e-mail read
-- as user_id: the e-mail as given, and as user_id trimmed and lower-cased, as the orders name them. A leading apostrophe,
-- which such exports put before a phone so that a spreadsheet keeps its "+" (and before the customer id,
-- so that it keeps all its digits), is not part of either.
CREATE OR REPLACE TABLE raw AS
SELECT
    record,
    lower(trim(user_id)) AS user_id,
    user_id AS email,
    first_name,
    last_name,
    CASE WHEN starts_with(phone, '''') THEN substr(phone, 2) ELSE phone END AS phone,
    country,
    limited_data_use,
    state,
    marketing_consent,
    city,
    postcode,
    date_of_birth,
    gender,
    CASE WHEN starts_with(external_id, '''') THEN substr(external_id, 2) ELSE external_id END AS external_id,
    madid
FROM raw
