-- Each customer of `raw` checked against CustomerRecord (shared/ml/datasets.py) where SQL can decide
-- it, into `checked` (the scheme of classify_orders.sql). Optional text: empty, or 1-256 characters
-- with no white space at either end; country two letters (kept upper case); limited_data_use one of
-- the model's true/false words (blank: not flagged), and so is marketing_consent; date_of_birth a
-- date written YYYY-MM-DD from 1900 to $today.
CREATE OR REPLACE TABLE checked AS
WITH reasons AS (
    SELECT
        *,
        CASE
            WHEN user_id IS NULL OR regexp_matches(user_id, '^(?:[ \t]+)$') THEN 'is required'
            WHEN regexp_matches(user_id, $identifier) THEN NULL
            ELSE '?'
        END AS user_id_reason,
        CASE WHEN email IS NULL OR regexp_matches(email, $identifier) THEN NULL ELSE '?' END AS email_reason,
        CASE
            WHEN first_name IS NULL OR regexp_matches(first_name, $identifier) THEN NULL ELSE '?'
        END AS first_name_reason,
        CASE
            WHEN last_name IS NULL OR regexp_matches(last_name, $identifier) THEN NULL ELSE '?'
        END AS last_name_reason,
        CASE WHEN phone IS NULL OR regexp_matches(phone, $identifier) THEN NULL ELSE '?' END AS phone_reason,
        CASE
            WHEN country IS NULL OR regexp_matches(country, '^(?:[A-Za-z]{2})$') THEN NULL ELSE '?'
        END AS country_reason,
        CASE
            WHEN limited_data_use IS NULL
                OR limited_data_use IN (
                    'true', 'True', 'TRUE', 'false', 'False', 'FALSE', 'yes', 'Yes', 'YES', 'no', 'No', 'NO', '1', '0'
                ) THEN NULL
            ELSE '?'
        END AS limited_data_use_reason,
        CASE
            WHEN marketing_consent IS NULL
                OR marketing_consent IN (
                    'true', 'True', 'TRUE', 'false', 'False', 'FALSE', 'yes', 'Yes', 'YES', 'no', 'No', 'NO', '1', '0'
                ) THEN NULL
            ELSE '?'
        END AS marketing_consent_reason,
        CASE WHEN state IS NULL OR regexp_matches(state, $identifier) THEN NULL ELSE '?' END AS state_reason,
        CASE WHEN city IS NULL OR regexp_matches(city, $identifier) THEN NULL ELSE '?' END AS city_reason,
        CASE WHEN postcode IS NULL OR regexp_matches(postcode, $identifier) THEN NULL ELSE '?' END
            AS postcode_reason,
        CASE
            WHEN date_of_birth IS NULL THEN NULL
            WHEN regexp_matches(date_of_birth, '^(?:[0-9]{4}-[0-9]{2}-[0-9]{2})$')
                AND TRY_CAST(date_of_birth AS DATE) BETWEEN DATE '1900-01-01' AND CAST($today AS DATE) THEN NULL
            ELSE '?'
        END AS date_of_birth_reason,
        CASE WHEN gender IS NULL OR regexp_matches(gender, $identifier) THEN NULL ELSE '?' END AS gender_reason,
        CASE
            WHEN external_id IS NULL OR regexp_matches(external_id, $identifier) THEN NULL ELSE '?'
        END AS external_id_reason,
        CASE WHEN madid IS NULL OR regexp_matches(madid, $identifier) THEN NULL ELSE '?' END AS madid_reason
    FROM raw
)
SELECT
    record,
    CASE
        WHEN coalesce(user_id_reason, email_reason, first_name_reason, last_name_reason, phone_reason,
            country_reason, limited_data_use_reason, state_reason, marketing_consent_reason, city_reason,
            postcode_reason, date_of_birth_reason, gender_reason, external_id_reason, madid_reason) IS NULL
            THEN 'good'
        WHEN coalesce(user_id_reason, '') = 'is required' AND coalesce(email_reason, first_name_reason,
            last_name_reason, phone_reason, country_reason, limited_data_use_reason, state_reason,
            marketing_consent_reason, city_reason, postcode_reason, date_of_birth_reason, gender_reason,
            external_id_reason, madid_reason) IS NULL THEN 'bad'
        ELSE 'undecided'
    END AS verdict,
    user_id,
    email,
    first_name,
    last_name,
    phone,
    upper(country) AS country,
    CASE
        WHEN lower(limited_data_use) IN ('true', 'yes', '1') THEN TRUE
        WHEN lower(limited_data_use) IN ('false', 'no', '0') THEN FALSE
    END AS limited_data_use,
    state,
    CASE
        WHEN lower(marketing_consent) IN ('true', 'yes', '1') THEN TRUE
        WHEN lower(marketing_consent) IN ('false', 'no', '0') THEN FALSE
    END AS marketing_consent,
    city,
    postcode,
    date_of_birth,
    gender,
    external_id,
    madid,
    user_id_reason
FROM reasons
