/* Each customer of `raw` checked against CustomerRecord (shared/ml/datasets.py) where SQL can decide */
/* it, into `checked` (the scheme of classify_orders.sql). Optional text: empty, or 1-256 characters */
/* with no white space at either end; country two letters (kept upper case); limited_data_use one of */
/* the model's true/false words (blank: not flagged), and so is marketing_consent; date_of_birth a */
/* date written YYYY-MM-DD from 1900 to $today. */
CREATE OR REPLACE TABLE checked AS
WITH reasons AS (
  SELECT
    *,
    CASE
      WHEN user_id IS NULL OR REGEXP_LIKE(user_id, '^(?:[ \t]+)$')
      THEN 'is required'
      WHEN REGEXP_LIKE(user_id, :identifier)
      THEN NULL
      ELSE '?'
    END AS user_id_reason,
    CASE WHEN email IS NULL OR REGEXP_LIKE(email, :identifier) THEN NULL ELSE '?' END AS email_reason,
    CASE
      WHEN first_name IS NULL OR REGEXP_LIKE(first_name, :identifier)
      THEN NULL
      ELSE '?'
    END AS first_name_reason,
    CASE
      WHEN last_name IS NULL OR REGEXP_LIKE(last_name, :identifier)
      THEN NULL
      ELSE '?'
    END AS last_name_reason,
    CASE WHEN phone IS NULL OR REGEXP_LIKE(phone, :identifier) THEN NULL ELSE '?' END AS phone_reason,
    CASE
      WHEN country IS NULL OR REGEXP_LIKE(country, '^(?:[A-Za-z]{2})$')
      THEN NULL
      ELSE '?'
    END AS country_reason,
    CASE
      WHEN limited_data_use IS NULL
      OR limited_data_use IN (
        'true',
        'True',
        'TRUE',
        'false',
        'False',
        'FALSE',
        'yes',
        'Yes',
        'YES',
        'no',
        'No',
        'NO',
        '1',
        '0'
      )
      THEN NULL
      ELSE '?'
    END AS limited_data_use_reason,
    CASE
      WHEN marketing_consent IS NULL
      OR marketing_consent IN (
        'true',
        'True',
        'TRUE',
        'false',
        'False',
        'FALSE',
        'yes',
        'Yes',
        'YES',
        'no',
        'No',
        'NO',
        '1',
        '0'
      )
      THEN NULL
      ELSE '?'
    END AS marketing_consent_reason,
    CASE WHEN state IS NULL OR REGEXP_LIKE(state, :identifier) THEN NULL ELSE '?' END AS state_reason,
    CASE WHEN city IS NULL OR REGEXP_LIKE(city, :identifier) THEN NULL ELSE '?' END AS city_reason,
    CASE
      WHEN postcode IS NULL OR REGEXP_LIKE(postcode, :identifier)
      THEN NULL
      ELSE '?'
    END AS postcode_reason,
    CASE
      WHEN date_of_birth IS NULL
      THEN NULL
      WHEN REGEXP_LIKE(date_of_birth, '^(?:[0-9]{4}-[0-9]{2}-[0-9]{2})$')
      AND TRY_CAST(date_of_birth AS DATE) BETWEEN CAST('1900-01-01' AS DATE) AND CAST(:today AS DATE)
      THEN NULL
      ELSE '?'
    END AS date_of_birth_reason,
    CASE WHEN gender IS NULL OR REGEXP_LIKE(gender, :identifier) THEN NULL ELSE '?' END AS gender_reason,
    CASE
      WHEN external_id IS NULL OR REGEXP_LIKE(external_id, :identifier)
      THEN NULL
      ELSE '?'
    END AS external_id_reason,
    CASE WHEN madid IS NULL OR REGEXP_LIKE(madid, :identifier) THEN NULL ELSE '?' END AS madid_reason
  FROM raw
)
SELECT
  record,
  CASE
    WHEN COALESCE(
      user_id_reason,
      email_reason,
      first_name_reason,
      last_name_reason,
      phone_reason,
      country_reason,
      limited_data_use_reason,
      state_reason,
      marketing_consent_reason,
      city_reason,
      postcode_reason,
      date_of_birth_reason,
      gender_reason,
      external_id_reason,
      madid_reason
    ) IS NULL
    THEN 'good'
    WHEN COALESCE(user_id_reason, '') = 'is required'
    AND COALESCE(
      email_reason,
      first_name_reason,
      last_name_reason,
      phone_reason,
      country_reason,
      limited_data_use_reason,
      state_reason,
      marketing_consent_reason,
      city_reason,
      postcode_reason,
      date_of_birth_reason,
      gender_reason,
      external_id_reason,
      madid_reason
    ) IS NULL
    THEN 'bad'
    ELSE 'undecided'
  END AS verdict,
  user_id,
  email,
  first_name,
  last_name,
  phone,
  UPPER(country) AS country,
  CASE
    WHEN LOWER(limited_data_use) IN ('true', 'yes', '1')
    THEN TRUE
    WHEN LOWER(limited_data_use) IN ('false', 'no', '0')
    THEN FALSE
  END AS limited_data_use,
  state,
  CASE
    WHEN LOWER(marketing_consent) IN ('true', 'yes', '1')
    THEN TRUE
    WHEN LOWER(marketing_consent) IN ('false', 'no', '0')
    THEN FALSE
  END AS marketing_consent,
  city,
  postcode,
  date_of_birth,
  gender,
  external_id,
  madid,
  user_id_reason
FROM reasons
